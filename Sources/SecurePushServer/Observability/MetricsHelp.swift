/// The `# HELP` lines of the metric families recorded through swift-metrics, whose Prometheus factory registers no
/// help text: the one home of what each of them means (the families `FetchStatsService` registers carry their
/// own). `/metrics` of every role passes through `annotate`; `APIOperationsTests` fails on a family without help.
enum MetricsHelp {
    /// Help text by family name, as the exposition names it.
    static let texts: [String: String] = [
        "securepush_deliveries_total": "Deliveries finished by this process's dispatcher, by outcome.",
        "securepush_push_duration": "Time from a push's start to the platform's answer, per platform (seconds).",
        "securepush_circuit_open": "1 while a push service's circuit breaker is open, per platform and Web Push or WNS host.",
        "securepush_circuit_opened_total": "Times a platform's circuit breaker opened.",
        "securepush_sealed_pushes_total": "Pushes sent with a sealed value, per platform and whether it carried a preview.",
        "securepush_replication_gate_wait": "Time claims waited for a synchronous standby at the replication gate (seconds).",
        "securepush_listener_connected": "1 while the dispatcher's LISTEN connection is up.",
        "securepush_listener_last_heard_timestamp_seconds": "When the dispatcher's LISTEN connection last heard a notification (Unix time).",
        "securepush_device_rebinds_total": "Push tokens a registration moved from one user's device to another user's.",
        "securepush_relay_pushes_total": "Pushes the relay forwarded, by outcome.",
        "securepush_relay_installation_pushes": "Pushes each installation sent through the relay in the last hour.",
        "hb_requests": "HTTP requests received, by route and method.",
        "hb_request_errors": "HTTP requests that ended in an error, by route and method.",
        "http_server_active_requests": "HTTP requests in progress.",
        "http_server_request_duration": "HTTP request duration, by route, method and status (seconds).",
    ]

    /// `text` (Prometheus' text exposition format) with a `# HELP` line before each `# TYPE` line that has none
    /// and whose family is known.
    static func annotate(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.dropFirst("# TYPE ".count).split(separator: " ").first,
                lines.last?.hasPrefix("# HELP \(name) ") != true, let help = texts[String(name)]
            {
                lines.append("# HELP \(name) \(help)")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}

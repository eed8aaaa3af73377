import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1

/// Reads the circuit breakers' state from `p1` while a storm runs: `/status`'s `open_circuits` (a list of
/// `{platform, host, state, ...}`) and `/metrics`' `securepush_circuit_open` gauge. Either may be absent
/// (a build without breakers): then its figures say "n/a".
final class CircuitSampler: Sendable {
    private struct State {
        var statusField = false
        var maxOpen = 0
        var seenOpen: Set<String> = []
        var gaugeSeen = false
        var maxGauge = 0.0
        var samples = 0
    }

    let api: APIClient
    private let state = NIOLockedValueBox(State())

    init(api: APIClient) { self.api = api }

    /// Samples every `interval` until cancelled.
    func run(every interval: Duration) async {
        while !Task.isCancelled {
            await sample()
            try? await Task.sleep(for: interval)
        }
    }

    private func sample() async {
        let status = await api.call(.GET, "/status")
        let metrics = await api.call(.GET, "/metrics")
        let object = try? JSONSerialization.jsonObject(with: status.body) as? [String: Any]
        let circuits = object?["open_circuits"] as? [[String: Any]]
        var gauge: Double?
        for line in String(decoding: metrics.body, as: UTF8.self).split(separator: "\n") where line.hasPrefix("securepush_circuit_open") {
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { gauge = max(gauge ?? 0, value) }
        }
        state.withLockedValue { state in
            state.samples += 1
            if let circuits {
                state.statusField = true
                let open = circuits.filter { ($0["state"] as? String)?.lowercased() != "closed" }
                state.maxOpen = max(state.maxOpen, open.count)
                for circuit in open {
                    let platform = circuit["platform"] as? String ?? "?"
                    let host = circuit["host"] as? String
                    state.seenOpen.insert(host.map { "\(platform)/\($0)" } ?? platform)
                }
            }
            if let gauge {
                state.gaugeSeen = true
                state.maxGauge = max(state.maxGauge, gauge)
            }
        }
    }

    /// Whether `/status` has `open_circuits`.
    var hasStatusField: Bool { state.withLockedValue { $0.statusField } }
    /// The most circuits open at once in `/status`.
    var maxOpen: Int { state.withLockedValue { $0.maxOpen } }

    /// The figures for the table.
    var figures: (status: String, metrics: String) {
        state.withLockedValue { state in
            let status =
                state.statusField
                ? "max \(state.maxOpen) open at once (\(state.seenOpen.sorted().joined(separator: ", ")))"
                : "n/a"
            let metrics = state.gaugeSeen ? String(format: "max %.0f", state.maxGauge) : "n/a"
            return (status, metrics)
        }
    }
}

import Foundation
import NIOConcurrencyHelpers

/// What the simulated phones saw: when pushes came, every answer of the read API with its time, and
/// how many notifications were fetched.
final class FetchTally: Sendable {
    private struct State {
        var firstPush = Double.infinity
        var lastPush = 0.0
        var pushLines = 0
        var fetched = 0
        var firstAnswer = Double.infinity
        var lastFetch = 0.0
        var latencies: [Double] = []
        var byStatus: [String: Int] = [:]
        var failures: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// A push line written at `time` (ISO 8601).
    func pushed(at time: String) {
        let seconds = (try? timeFormat.parse(time))?.timeIntervalSince1970 ?? Date().timeIntervalSince1970
        state.withLockedValue {
            $0.pushLines += 1
            $0.firstPush = min($0.firstPush, seconds)
            $0.lastPush = max($0.lastPush, seconds)
        }
    }

    /// One answer (`nil`: none came, with `failure`) that took `seconds`.
    func answered(status: Int?, seconds: Double, failure: String?) {
        let now = Date().timeIntervalSince1970
        state.withLockedValue {
            $0.firstAnswer = min($0.firstAnswer, now - seconds)
            $0.latencies.append(seconds)
            $0.byStatus[status.map(String.init) ?? "none", default: 0] += 1
            if let failure { $0.failures[String(failure.prefix(60)), default: 0] += 1 }
        }
    }

    /// A notification fetched (200).
    func fetched() {
        let now = Date().timeIntervalSince1970
        state.withLockedValue {
            $0.fetched += 1
            $0.lastFetch = max($0.lastFetch, now)
        }
    }

    /// The figures as `key=value` words (times as Unix seconds).
    func line(expected: Int, completed: Bool) -> String {
        state.withLockedValue { s in
            let percentiles = Percentiles(s.latencies)
            let answers = s.byStatus.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
            let failures = s.failures.map { "\($0.value)x \($0.key)" }.joined(separator: "; ")
            let fetchSeconds = s.lastFetch - s.firstAnswer
            func f(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }
            var words = [
                "devices expected=\(expected)", "fetched=\(s.fetched)", "completed=\(completed ? "yes" : "no")", "push_lines=\(s.pushLines)",
                "first_push=\(f(s.firstPush))", "last_push=\(f(s.lastPush))", "first_fetch=\(f(s.firstAnswer))", "last_fetch=\(f(s.lastFetch))",
                "fetches_per_s=\(f(fetchSeconds > 0 ? Double(s.fetched) / fetchSeconds : 0, 0))",
                "p50_ms=\(f(percentiles(0.5) * 1000, 2))", "p99_ms=\(f(percentiles(0.99) * 1000, 2))", "max_ms=\(f(percentiles(1) * 1000, 2))",
                "answers=\(answers)", "peak_rss_kb=\(ProcessMemory.peakKB() ?? 0)",
            ]
            if !failures.isEmpty { words.append("failures=\"\(failures)\"") }
            return words.joined(separator: " ")
        }
    }
}

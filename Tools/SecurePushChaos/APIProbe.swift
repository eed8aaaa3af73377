import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// Calls one API endpoint at a steady pace, each call in its own task (a slow answer does not delay the
/// next call), and keeps every answer with the time the call started.
final class APIProbe: Sendable {
    /// One call.
    struct Sample: Sendable {
        var startedAt: Date
        var answer: APIClient.Answer
        var finishedAt: Date { startedAt.addingTimeInterval(answer.seconds) }
    }

    let name: String
    private let samples = NIOLockedValueBox<[Sample]>([])
    private let stopped = Atomic<Bool>(false)
    private let call: @Sendable () async -> APIClient.Answer

    init(name: String, call: @escaping @Sendable () async -> APIClient.Answer) {
        self.name = name
        self.call = call
    }

    /// Every call so far.
    var recorded: [Sample] { samples.withLockedValue { $0 } }

    /// Calls every `interval` until `stop()`, then waits for the calls in flight.
    ///
    /// The probe is stopped by a flag, never by cancelling this task: cancellation would reach the calls in
    /// flight (children of the task group) and record the last of them as unanswered.
    func run(every interval: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            while !stopped.load(ordering: .acquiring) {
                group.addTask {
                    let startedAt = Date()
                    let answer = await self.call()
                    self.samples.withLockedValue { $0.append(Sample(startedAt: startedAt, answer: answer)) }
                }
                try? await Task.sleep(for: interval)
            }
            // Calls in flight finish (their own client deadline bounds them): a hang is measured, not cut short.
            await group.waitForAll()
        }
    }

    /// Ends `run(every:)` after its current pause; calls in flight still finish and are recorded.
    func stop() {
        stopped.store(true, ordering: .releasing)
    }

    /// What the calls started in `window` got: counts by status, the slowest, and the failures.
    func summary(startedIn window: ClosedRange<Date>) -> ProbeSummary {
        var summary = ProbeSummary()
        for sample in recorded where window.contains(sample.startedAt) {
            summary.calls += 1
            summary.maxSeconds = max(summary.maxSeconds, sample.answer.seconds)
            if let status = sample.answer.status {
                summary.byStatus[status, default: 0] += 1
            } else {
                summary.noAnswer += 1
                summary.failures[String((sample.answer.failure ?? "?").prefix(60)), default: 0] += 1
            }
        }
        return summary
    }
}

/// Answers of the calls in one window.
struct ProbeSummary: Sendable {
    var calls = 0
    var byStatus: [Int: Int] = [:]
    var noAnswer = 0
    /// Why calls got no answer (error descriptions, shortened), with counts.
    var failures: [String: Int] = [:]
    var maxSeconds = 0.0

    /// `503×12 200×3` style.
    var statuses: String {
        var parts = byStatus.sorted { $0.key > $1.key }.map { "\($0.value)×\($0.key)" }
        if noAnswer > 0 {
            parts.append(
                "\(noAnswer)×no answer (" + failures.sorted { $0.value > $1.value }.map { "\($0.value)×\($0.key)" }.joined(separator: ", ") + ")")
        }
        return parts.isEmpty ? "none" : parts.joined(separator: " ")
    }
}

import Foundation
import SecurePushFakes

/// Row 5: a storm on every platform's fake for `--storm-seconds`: three phases in which each platform gets
/// one of 503s, 429 with `Retry-After`, and stalled requests (rotated, so each platform has each kind once
/// and the three kinds run at the same time). Checked: nothing lost; a push answered 429 is not tried again
/// before its `Retry-After`; requests in flight at each fake stay within the processes' configured
/// concurrency. Reported: the circuit breakers' state in `/status` and `/metrics` (n/a without breakers).
enum ProviderStormRow {
    static let retryAfterSeconds = 2
    /// Processes × lanes × pushes in flight per lane, as configured for the row's processes.
    static func concurrencyBound(_ context: ChaosContext) -> Int {
        let settings = ChaosRun.baseEnvironment.merging(context.plan.environment) { _, new in new }
        let lanes = Int(settings["SECUREPUSH_LANES"] ?? "") ?? 2
        let perLane = Int(settings["SECUREPUSH_CONCURRENCY"] ?? "") ?? 64
        return context.processes.count * lanes * perLane
    }

    static func plan(_ options: ChaosOptions) -> RowPlan {
        let marks = Marks()
        let sampler = Shared<CircuitSampler?>(nil)
        return RowPlan(
            tail: .seconds(2),
            disrupt: { context in
                let circuits = CircuitSampler(api: context.api)
                sampler.value = circuits
                let sampling = Task { await circuits.run(every: .milliseconds(500)) }
                let kinds: [StormKind] = [.serverError, .throttled(seconds: retryAfterSeconds), .stall]
                let phase = options.stormSeconds / Double(kinds.count)
                marks.set("storm")
                for round in 0..<kinds.count {
                    for (index, platform) in context.plan.platforms.enumerated() {
                        context.fakes.setStorm(kinds[(index + round) % kinds.count], on: platform)
                    }
                    try await context.hold(.seconds(phase))
                }
                for platform in context.plan.platforms { context.fakes.setStorm(nil, on: platform) }
                marks.set("calm")
                // Circuits close again once the providers answer.
                try await context.hold(.seconds(3))
                sampling.cancel()
                await sampling.value
                context.report.figure("storm", seconds(options.stormSeconds) + " (3 phases: 5xx, 429/Retry-After \(retryAfterSeconds) s, stall)")
            },
            verify: { context, attempts in
                verify(context, attempts)
                let circuits = sampler.value
                if let circuits {
                    let (status, metrics) = circuits.figures
                    context.report.figure("/status open_circuits", status)
                    context.report.figure("/metrics securepush_circuit_open", metrics)
                    if circuits.hasStatusField {
                        context.report.check("a circuit opened during the storm", circuits.maxOpen > 0)
                    }
                }
            }
        )
    }

    private static func verify(_ context: ChaosContext, _ attempts: [PushAttempt]) {
        let report = context.report
        let inFlight = context.plan.platforms.map { context.fakes.server($0).traffic.maxInFlight }
        let bound = concurrencyBound(context)
        report.figure("max in flight per fake (apns/fcm/wns/webpush)", inFlight.map(String.init).joined(separator: "/") + " (bound \(bound))")
        report.check("in-flight requests within the configured concurrency", inFlight.allSatisfy { $0 <= bound })

        let answered5xx = attempts.filter { ($0.status ?? 0) >= 500 }.count
        let throttled = attempts.filter { $0.status == 429 }
        let stalled = attempts.filter { $0.status == nil }.count
        report.figure("storm answers", "\(answered5xx)×5xx, \(throttled.count)×429, \(stalled)×stalled")

        // Per push: the next try of a push answered 429 comes no sooner than its Retry-After.
        let byPush = Dictionary(grouping: attempts.filter { $0.notification != nil }) {
            LossReport.Pair(notification: $0.notification!, platform: $0.platform, deviceKey: $0.deviceKey)
        }
        var violations = 0
        var shortest: Double?
        for (_, tries) in byPush {
            let ordered = tries.sorted { $0.receivedAt < $1.receivedAt }
            for (first, next) in zip(ordered, ordered.dropFirst()) where first.status == 429 {
                let gap = next.receivedAt.timeIntervalSince(first.receivedAt)
                shortest = min(shortest ?? gap, gap)
                if gap < (first.retryAfter ?? 0) - 0.05 { violations += 1 }
            }
        }
        report.figure("next try after a 429", shortest.map { "≥ " + seconds($0) } ?? "none retried")
        report.check("Retry-After honoured per push", violations == 0 && !throttled.isEmpty)

        // Per platform (what a breaker adds): pushes received while the platform's last 429 asked to wait.
        var duringRetryAfter = 0
        for platform in context.plan.platforms {
            var waitUntil = Date.distantPast
            for attempt in attempts.filter({ $0.platform == platform }).sorted(by: { $0.receivedAt < $1.receivedAt }) {
                if attempt.receivedAt < waitUntil { duringRetryAfter += 1 }
                if attempt.status == 429 {
                    waitUntil = max(waitUntil, attempt.receivedAt.addingTimeInterval(attempt.retryAfter ?? 0))
                }
            }
        }
        report.figure("pushes to a platform inside its last Retry-After", "\(duringRetryAfter)")
    }
}

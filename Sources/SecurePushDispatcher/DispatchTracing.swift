import SecurePushCore
import Tracing

/// The dispatcher's spans (`SECUREPUSH_OTEL_ENDPOINT`, docs/operations.md § Traces), made only for
/// notifications whose producer passed a traceparent: a claim span linking each of them (a batch has no single
/// parent) and one client span per push, a child of its producer's context, with the platform and the outcome.
/// Attributes carry ids and words only: never a payload, preview, user id, token or secret. The spans are not
/// bound to the task, so nothing a provider sends can carry them (and the providers' HTTP clients have no tracer).
enum DispatchTracing {
    /// Records the claim that took `batch` (started at `start`), if any of its deliveries is traced.
    static func recordClaim(_ batch: ClaimedBatch, lane: Int, start: DefaultTracerClock.Instant) {
        TraceParent.recordLinked(
            "securepush.claim", ofKind: .consumer, start: start, parents: batch.deliveries.compactMap(\.traceParent),
            attributes: ["securepush.claimed": .int64(Int64(batch.deliveries.count)), "securepush.lane": .int64(Int64(lane))])
    }

    /// Runs `send` for `delivery` inside its push span when its notification is traced.
    static func push(_ delivery: ClaimedDelivery, _ send: () async -> PushResult) async -> PushResult {
        guard let parent = delivery.traceParent else { return await send() }
        let span = InstrumentationSystem.tracer.startSpan("securepush.push", context: TraceParent.context(parent), ofKind: .client)
        span.attributes["securepush.platform"] = delivery.push.target.platform.rawValue
        span.attributes["securepush.notification_id"] = delivery.push.notificationID.description
        span.attributes["securepush.attempt"] = delivery.push.attempt
        let result = await send()
        switch result {
        case .sent:
            span.attributes["securepush.outcome"] = "sent"
        case .retry:
            span.attributes["securepush.outcome"] = "retry"
        case .tokenInvalid:
            span.attributes["securepush.outcome"] = "token_invalid"
            span.setStatus(SpanStatus(code: .error))
        case .failed:
            span.attributes["securepush.outcome"] = "failed"
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
        return result
    }
}

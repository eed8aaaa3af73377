import SecurePushCore
import SecurePushStore
import Tracing

/// The read API's span (`SECUREPUSH_OTEL_ENDPOINT`): a device's fetch of notifications whose producer passed a
/// traceparent is one server span linked to each of their traces. Nothing else about the request (no user id,
/// credential or payload) is an attribute; a fetch of untraced notifications makes no span.
enum FetchTracing {
    /// Records the fetch that started at `start` and returned `results`.
    static func record(_ results: [FetchedNotification], route: String, start: DefaultTracerClock.Instant) {
        let parents = results.compactMap(\.traceParent)
        TraceParent.recordLinked(
            "securepush.fetch", ofKind: .server, start: start, parents: parents,
            attributes: ["http.route": .string(route), "securepush.fetched": .int64(Int64(parents.count))])
    }
}

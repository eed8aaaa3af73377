import Tracing

/// A producer's W3C `traceparent` (`securepush.notifications.traceparent`, migration 028: validated there), and
/// the span context it names. With no tracer bootstrapped (`SECUREPUSH_OTEL_ENDPOINT` unset) the context is
/// empty and every span is a no-op.
public enum TraceParent {
    /// The context `traceparent` continues, as the bootstrapped instrument (OTel's W3C propagator) reads it.
    public static func context(_ traceparent: String) -> ServiceContext {
        var context = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(["traceparent": traceparent], into: &context, using: HeaderExtractor())
        return context
    }

    struct HeaderExtractor: Extractor {
        func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
    }

    /// Records a span that started at `start` and links each producer context in `parents` (a batch has no single
    /// parent), with `attributes`; nothing when none of them is traced.
    public static func recordLinked(
        _ name: String, ofKind kind: SpanKind, start: DefaultTracerClock.Instant, parents: [String], attributes: SpanAttributes
    ) {
        guard !parents.isEmpty else { return }
        let span = InstrumentationSystem.tracer.startSpan(name, context: .topLevel, ofKind: kind, at: start)
        span.attributes = attributes
        for parent in parents {
            span.addLink(SpanLink(context: context(parent), attributes: [:]))
        }
        span.end()
    }
}

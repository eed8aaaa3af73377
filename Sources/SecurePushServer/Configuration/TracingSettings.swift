import Foundation
import Logging
import SecurePushCore
import SecurePushStore
import ServiceLifecycle
import Tracing

#if canImport(OTel)
    import OTel
#endif

/// OpenTelemetry traces (`SECUREPUSH_OTEL_ENDPOINT`, docs/operations.md § Traces): off by default. On, the
/// process exports over OTLP/HTTP the spans of traced notifications (those whose producer passed a
/// traceparent): the dispatcher's claim and pushes, the read API's fetches.
public struct TracingSettings: Sendable {
    /// The collector's OTLP/HTTP base URL, e.g. `http://127.0.0.1:4318` (`/v1/traces` is appended).
    public var endpoint: String
    /// `http/protobuf` (default) or `http/json` (`SECUREPUSH_OTEL_PROTOCOL`).
    public var json: Bool

    /// The settings, or `nil` when `SECUREPUSH_OTEL_ENDPOINT` is not set.
    init?(values: ConfigurationValues) throws {
        guard let endpoint = values.string("SECUREPUSH_OTEL_ENDPOINT") else { return nil }
        guard let components = URLComponents(string: endpoint), ["http", "https"].contains(components.scheme ?? ""), components.host != nil
        else {
            throw ConfigurationError("SECUREPUSH_OTEL_ENDPOINT must be the collector's OTLP/HTTP URL, e.g. http://127.0.0.1:4318")
        }
        self.endpoint = endpoint
        self.json = try values.choice("SECUREPUSH_OTEL_PROTOCOL", default: "http/protobuf", allowed: ["http/protobuf", "http/json"]) == "http/json"
    }

    /// Bootstraps the process's tracer (once, before any span) and returns the exporter's service, to run first
    /// in the service group so that it stops last and flushes the spans of the others.
    func bootstrap(role: String) throws -> any Service {
        #if canImport(OTel)
            return try bootstrapOTel(role: role)
        #else
            throw ConfigurationError("SECUREPUSH_OTEL_ENDPOINT is set, but this build was made without OpenTelemetry (SECUREPUSH_WITHOUT_OTEL)")
        #endif
    }

    #if canImport(OTel)
        private func bootstrapOTel(role: String) throws -> any Service {
            var configuration = OTel.Configuration.default
            configuration.serviceName = "securepush"
            configuration.resourceAttributes = ["securepush.role": role]
            // Logs and metrics have their own backends (swift-log, Prometheus): only traces go to the collector.
            configuration.logs.enabled = false
            configuration.metrics.enabled = false
            configuration.propagators = [.traceContext]
            // A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is: an explicitly set endpoint is used as is, so the
            // signal's path is added here.
            configuration.traces.otlpExporter.endpoint = endpoint.hasSuffix("/") ? endpoint + "v1/traces" : endpoint + "/v1/traces"
            configuration.traces.otlpExporter.protocol = json ? .httpJSON : .httpProtobuf
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            return backend.service
        }
    #endif
}

import SecurePushServer
import Testing

@Suite("Trace settings")
struct TracingSettingsTests {
    let base = ["DATABASE_URL": "postgres://app:s3cret@db.internal:5433/push"]

    @Test("off by default; the endpoint must be an http(s) URL and the protocol one of OTLP/HTTP's, each error naming the variable")
    func settings() throws {
        #expect(try SecurePushConfiguration(environment: base).tracing == nil)
        let on = try SecurePushConfiguration(environment: base.merging(["SECUREPUSH_OTEL_ENDPOINT": "http://collector:4318"]) { $1 })
        #expect(on.tracing?.endpoint == "http://collector:4318")
        #expect(on.tracing?.json == false)
        for (key, value) in [("SECUREPUSH_OTEL_ENDPOINT", "collector:4318"), ("SECUREPUSH_OTEL_PROTOCOL", "grpc")] {
            var environment = base.merging(["SECUREPUSH_OTEL_ENDPOINT": "http://collector:4318"]) { $1 }
            environment[key] = value
            #expect(throws: (any Error).self) { try SecurePushConfiguration(environment: environment) }
            do {
                _ = try SecurePushConfiguration(environment: environment)
            } catch {
                #expect("\(error)".contains(key), "\(error)")
            }
        }
    }
}

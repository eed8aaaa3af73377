import Crypto
import Foundation
import SecurePushRelayProtocol

/// SecurePush's provider alone, against a fake APNs in another process (`--serve-fake`).
enum ClientMode {
    static func run(_ arguments: BenchArguments) async throws {
        let port = try arguments.int("port", default: 0)
        let caFile = try arguments.string("ca")
        let keyFile = try arguments.string("key")
        let pushes = try arguments.int("count", default: 20_000)
        let inFlight = try arguments.int("in-flight", default: 100)
        let key = try P256.Signing.PrivateKey(pemRepresentation: try String(contentsOfFile: keyFile, encoding: .utf8))
        var load = ProviderLoad(baseURL: "https://127.0.0.1:\(port)", caFile: caFile, key: key)
        load.sealed = (try? arguments.string("sealed")) == "1"
        let via = (try? arguments.string("relay")) == nil ? "direct" : "relay"
        if let url = try? arguments.string("relay") {
            guard let installation = UUID(uuidString: try arguments.string("installation")) else { throw BenchError("--installation must be a uuid") }
            let key = try InstallationKey(text: try String(contentsOfFile: try arguments.string("installation-key"), encoding: .utf8))
            load.relay = (url, installation, key)
            load.relayRequests = try arguments.int("relay-requests", default: 8)
        }
        if let rate = try? arguments.string("rate"), let perSecond = Int(rate) {
            let seconds = try arguments.int("seconds", default: 5)
            let durations = try await load.paced(rate: perSecond, seconds: seconds).sorted()
            func quantile(_ q: Double) -> Double { durations[min(durations.count - 1, Int(Double(durations.count) * q))] }
            print(
                String(
                    format: "apns_paced via=\(via) rate=%d count=%d p50_ms=%.2f p99_ms=%.2f", perSecond, durations.count, quantile(0.5),
                    quantile(0.99)))
            return
        }
        let (sent, seconds) = try await load.run(pushes: pushes, inFlight: inFlight)
        print(
            String(
                format: "apns via=\(via) sealed=\(load.sealed ? 1 : 0) count=%d in_flight=%d sent=%d elapsed_s=%.3f pushes_per_s=%.0f", pushes,
                inFlight,
                sent, seconds, Double(sent) / seconds
            ))
    }
}

import Crypto
import Foundation

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
        let (sent, seconds) = try await load.run(pushes: pushes, inFlight: inFlight)
        print(
            String(
                format: "apns sealed=\(load.sealed ? 1 : 0) count=%d in_flight=%d sent=%d elapsed_s=%.3f pushes_per_s=%.0f", pushes, inFlight, sent,
                seconds, Double(sent) / seconds
            ))
    }
}

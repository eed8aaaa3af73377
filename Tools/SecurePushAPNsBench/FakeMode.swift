import Crypto
import Dispatch
import Foundation
import SecurePushFakes

#if canImport(Glibc)
    import Glibc
#endif

/// The fake APNs alone, for clients in other processes (ours, aioapns, h2load).
enum FakeMode {
    static func run(_ arguments: BenchArguments) async throws {
        guard let directory = arguments.positional else { throw BenchError("--serve-fake needs a directory for the signing key") }
        let maxStreams = try arguments.int("max-streams", default: 1000)
        let initialStreams = try arguments.int("initial-streams", default: 1)
        let key = P256.Signing.PrivateKey()
        let keyFile = URL(fileURLWithPath: directory).appendingPathComponent("key.p8").path
        guard FileManager.default.createFile(atPath: keyFile, contents: Data(key.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600])
        else { throw BenchError("cannot write \(keyFile)") }
        let fake = try await FakeAPNsServer.start(
            keys: [.init(teamID: ProviderLoad.teamID, keyID: ProviderLoad.keyID, publicKey: key.publicKey)],
            maxConcurrentStreams: maxStreams, initialMaxConcurrentStreams: initialStreams, keepsRequests: false)
        let jwt = try providerToken(key: key)
        emit(
            "fake port=\(fake.server.port) ca=\(fake.caFile) key=\(keyFile) team=\(ProviderLoad.teamID) key_id=\(ProviderLoad.keyID)"
                + " topic=\(ProviderLoad.topic) initial_streams=\(initialStreams) max_streams=\(maxStreams) jwt=\(jwt)")

        signal(SIGUSR1, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "securepush.bench.signals")
        let stats = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: queue)
        stats.setEventHandler {
            emit("stats accepted=\(fake.deliveredCount) connections=\(fake.server.acceptedConnections)")
        }
        stats.resume()
        let (terminated, terminate) = AsyncStream<Void>.makeStream()
        let term = DispatchSource.makeSignalSource(signal: SIGTERM, queue: queue)
        term.setEventHandler { terminate.finish() }
        term.resume()
        for await _ in terminated {}
        emit("stats accepted=\(fake.deliveredCount) connections=\(fake.server.acceptedConnections)")
        await fake.shutdown()
        stats.cancel()
        term.cancel()
    }

    /// Writes one line to standard output at once (a pipe or file would otherwise buffer it).
    static func emit(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// An ES256 provider token (`{"alg":"ES256","kid":…}.{"iss":…,"iat":…}`), valid for an hour.
    static func providerToken(key: P256.Signing.PrivateKey) throws -> String {
        let header = #"{"alg":"ES256","kid":"\#(ProviderLoad.keyID)"}"#
        let claims = #"{"iss":"\#(ProviderLoad.teamID)","iat":\#(Int(Date().timeIntervalSince1970))}"#
        let signingInput = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + base64URL(signature.rawRepresentation)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

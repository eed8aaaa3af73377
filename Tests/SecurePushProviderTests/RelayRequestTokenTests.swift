import Foundation
import SecurePushRelayProtocol
import Testing

@Suite("Relay request tokens")
struct RelayRequestTokenTests {
    let installation = UUID()
    let key = InstallationKey()
    let body = Data(#"{"pushes":[]}"#.utf8)

    @Test("a token names its installation in its header and verifies for exactly its request")
    func roundTrip() async throws {
        let token = try await RelayTokenSigner(installation: installation, key: key).sign(method: "POST", path: "/v1/relay/pushes", body: body)
        #expect(await RelayRequestToken.installation(of: token) == installation)
        let verifier = try await RelayTokenVerifier(publicKey: key.publicKey)
        let claims = try await verifier.verify(token, installation: installation, method: "POST", path: "/v1/relay/pushes", body: body)
        #expect(claims.htu == "/v1/relay/pushes" && claims.htm == "POST")
        await #expect(throws: RelayWireError.self) {
            try await verifier.verify(token, installation: installation, method: "POST", path: "/v1/relay/tokens", body: body)
        }
        await #expect(throws: RelayWireError.self) {
            try await verifier.verify(token, installation: installation, method: "POST", path: "/v1/relay/pushes", body: Data("{}".utf8))
        }
        await #expect(throws: RelayWireError.self) {
            try await verifier.verify(
                token, installation: installation, method: "POST", path: "/v1/relay/pushes", body: body, now: Date().addingTimeInterval(120))
        }
    }

    @Test("a token verifies only with its installation's key and only as that installation")
    func onlyItsOwn() async throws {
        let token = try await RelayTokenSigner(installation: installation, key: key).sign(method: "POST", path: "/p", body: body)
        let verifier = try await RelayTokenVerifier(publicKey: key.publicKey)
        _ = try await verifier.verify(token, installation: installation, method: "POST", path: "/p", body: body)
        // The relay finds the key by the header's kid; a key that verifies must also belong to the issuer.
        await #expect(throws: RelayWireError.self) {
            try await verifier.verify(token, installation: UUID(), method: "POST", path: "/p", body: body)
        }
        let stranger = try await RelayTokenVerifier(publicKey: InstallationKey().publicKey)
        await #expect(throws: RelayWireError.self) {
            try await stranger.verify(token, installation: installation, method: "POST", path: "/p", body: body)
        }
    }
}

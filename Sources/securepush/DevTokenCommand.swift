import ArgumentParser
import Foundation
import SecurePushAPI
import SecurePushCore
import SecurePushServer

struct DevTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev-token",
        abstract: "Print a user JWT signed with SECUREPUSH_USER_JWT_SECRET (HS256), for trying the API locally."
    )

    @Option(help: "The user id (the token's sub).")
    var user: String

    @Option(help: "Lifetime, e.g. 1h.")
    var ttl = "1h"

    @Option(name: .customLong("jwt-secret"), help: "HS256 secret (SECUREPUSH_USER_JWT_SECRET).")
    var secret: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        guard let secret = secret ?? environment["SECUREPUSH_USER_JWT_SECRET"], !secret.isEmpty else {
            throw ValidationError("SECUREPUSH_USER_JWT_SECRET is not set (dev-token signs HS256 tokens)")
        }
        guard secret.utf8.count >= 32 else {
            throw ValidationError("SECUREPUSH_USER_JWT_SECRET must be at least 32 bytes")
        }
        guard let lifetime = ConfigurationValues.parseDuration(ttl), lifetime > .zero else {
            throw ValidationError("--ttl must be a duration like 30m or 1h")
        }
        let verifier = try await UserTokenVerifier(
            key: .hs256(secret: secret),
            issuer: environment["SECUREPUSH_USER_JWT_ISSUER"],
            audience: environment["SECUREPUSH_USER_JWT_AUDIENCE"]
        )
        let claims = UserClaims(
            subject: user,
            expiresAt: Date().addingTimeInterval(lifetime.secondsDouble),
            issuer: environment["SECUREPUSH_USER_JWT_ISSUER"],
            audience: environment["SECUREPUSH_USER_JWT_AUDIENCE"]
        )
        print(try await verifier.sign(claims))
    }
}

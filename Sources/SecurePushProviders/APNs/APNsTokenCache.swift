import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Provider JWTs, one per (team, key), reused for `lifetime` and renewed early only when APNs
/// rejects one as expired. Signing happens under the lock, so concurrent sends share one token.
final class APNsTokenCache: Sendable {
    private struct Entry {
        var token: String
        var issuedAt: Date
    }

    private let lifetime: TimeInterval
    private let now: @Sendable () -> Date
    private let entries = NIOLockedValueBox<[String: Entry]>([:])

    init(lifetime: Duration, now: @escaping @Sendable () -> Date = { Date() }) {
        self.lifetime = Double(lifetime.components.seconds)
        self.now = now
    }

    /// The current token for `app`, signing a new one when there is none or it is too old.
    func token(for app: APNsConfiguration.App) throws -> String {
        let key = Self.cacheKey(app)
        return try entries.withLockedValue { entries in
            let now = now()
            if let entry = entries[key], now.timeIntervalSince(entry.issuedAt) < lifetime, now >= entry.issuedAt.addingTimeInterval(-60) {
                return entry.token
            }
            let token = try Self.sign(app: app, issuedAt: now)
            entries[key] = Entry(token: token, issuedAt: now)
            return token
        }
    }

    /// Drops `rejected` if it is still the cached token for `app` (another send may have renewed it already).
    func invalidate(_ rejected: String, for app: APNsConfiguration.App) {
        let key = Self.cacheKey(app)
        entries.withLockedValue { entries in
            if entries[key]?.token == rejected { entries[key] = nil }
        }
    }

    static func cacheKey(_ app: APNsConfiguration.App) -> String { app.teamID + "/" + app.keyID }

    static func sign(app: APNsConfiguration.App, issuedAt: Date) throws -> String {
        try CompactJWT.es256(
            header: ["alg": "ES256", "kid": app.keyID],
            claims: ["iss": app.teamID, "iat": Int(issuedAt.timeIntervalSince1970)],
            key: app.key
        )
    }
}

import Crypto
import Foundation
import Logging
import SecurePushCore
import SecurePushStore

/// Failed-authentication throttling shared by both authentication middlewares: after a few failures
/// per client address or device id, `429 too_many_requests` with `Retry-After`, growing with repeated
/// failures. The state is in PostgreSQL, so every API process sees it.
struct AuthThrottle: Sendable {
    let api: APIContext

    /// The throttle keys of a request: `addr:<bucket>` of its client address, and `device:<bucket>` of the
    /// device it names. A bucket is 16 bits of the SHA-256 of the address (`addressKey`) or the lowercase
    /// device id, so a client that changes its address (or names random devices) for each attempt adds no
    /// more than 65,536 rows of each kind to `securepush.auth_failures`, however many addresses it has; the
    /// table holds no client address either. Addresses and devices sharing a bucket share its budget of
    /// failures, which costs nobody anything: a block never refuses a valid credential.
    static func keys(client: String, deviceID: UUID? = nil) -> [String] {
        ["addr:" + bucket(addressKey(client))] + (deviceID.map { ["device:" + bucket($0.uuidString.lowercased())] } ?? [])
    }

    /// The buckets per kind of key.
    static let buckets = 1 << 16

    /// The bucket of `text`: the first two bytes of its SHA-256, as four hex digits.
    static func bucket(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).prefix(2).hexEncoded
    }

    /// An IPv6 client counts as its /64, the block one host or subscriber line is given: a host that picks a new
    /// source address for each attempt otherwise adds a throttle row each time and is never blocked. A block
    /// never refuses a valid credential, so neighbours in the block lose nothing. IPv4 (and IPv4-mapped)
    /// addresses count as themselves.
    static func addressKey(_ client: String) -> String {
        guard let address = IPAddress(client), !address.isIPv4, address.ipv4Mapped == nil,
            let prefix = IPAddress(bytes: Array(address.bytes[0..<8]) + Array(repeating: 0, count: 8))
        else { return client }
        return "\(prefix)/64"
    }

    /// Throws 429 while any key is blocked.
    func refuseIfBlocked(_ blockedFor: Double) throws {
        if blockedFor > 0 {
            throw APIError.tooManyRequests(retryAfter: blockedFor, "Too many failed attempts; retry later.")
        }
    }

    /// Refuses a request that brought no valid credential: 429 while any of `keys` is blocked, else a failed
    /// attempt (`fail`). The authentication middlewares and the operations token share it.
    func reject(keys: [String], kind: String, unauthorized: APIError, logger: Logger) async throws -> Never {
        try refuseIfBlocked(try await api.database { try await $0.security.blockedFor(keys) })
        try await fail(keys: keys, deviceID: nil, kind: kind, unauthorized: unauthorized, logger: logger)
    }

    /// Records a failed attempt (and the audit event) and throws 429 when it started a block, else `unauthorized`.
    func fail(keys: [String], deviceID: UUID?, kind: String, unauthorized: APIError, logger: Logger) async throws -> Never {
        let policy = api.limits.authThrottle
        let blocked = try await api.database { stores in
            let blocked = try await stores.security.recordFailure(keys, policy: policy)
            try await stores.security.audit(.tokenInvalid, userID: nil, deviceID: deviceID, reason: kind)
            if blocked > 0 {
                try await stores.security.audit(
                    .throttled, userID: nil, deviceID: deviceID, reason: "\(kind): blocked for \(Int(blocked.rounded(.up))) s")
            }
            return blocked
        }
        if blocked > 0 {
            logger.notice("authentication throttled", metadata: ["auth.kind": "\(kind)", "auth.blocked_seconds": "\(Int(blocked.rounded(.up)))"])
            throw APIError.tooManyRequests(retryAfter: blocked, "Too many failed attempts; retry later.")
        }
        throw unauthorized
    }
}

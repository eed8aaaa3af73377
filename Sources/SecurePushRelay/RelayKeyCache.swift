import Foundation
import NIOConcurrencyHelpers
import SecurePushRelayProtocol

/// The installations' public keys, ready to check request tokens, kept in memory so a request costs one
/// round trip to the database (`RelayStore.admit`) rather than three. A cached key is never trusted alone:
/// `admit` confirms in the same statement that its version is still the installation's, so a rotated key
/// or a disabled installation is refused from the next request on, in every relay process.
final class RelayKeyCache: Sendable {
    /// A key as cached: its version and its verifier.
    struct Entry: Sendable {
        var keyVersion: Int
        var verifier: RelayTokenVerifier
    }

    /// The most installations kept (the cache starts over when full: an installation is cached only once a
    /// lookup found it, so unknown ids sent by anyone never fill it).
    let capacity: Int
    private let entries = NIOLockedValueBox<[UUID: Entry]>([:])

    init(capacity: Int = 100_000) {
        self.capacity = max(1, capacity)
    }

    /// The cached key of `installation`, if any.
    func cached(_ installation: UUID) -> Entry? {
        entries.withLockedValue { $0[installation] }
    }

    /// Loads the key of `installation` from `store` and caches it; `nil` when there is no such installation.
    func load(_ installation: UUID, from store: RelayStore) async throws -> Entry? {
        guard let credential = try await store.credential(of: installation) else {
            forget(installation)
            return nil
        }
        let entry = Entry(keyVersion: credential.keyVersion, verifier: try await RelayTokenVerifier(publicKey: credential.publicKey))
        entries.withLockedValue { entries in
            if entries.count >= capacity, entries[installation] == nil { entries.removeAll() }
            entries[installation] = entry
        }
        return entry
    }

    /// Drops the key of `installation`.
    func forget(_ installation: UUID) {
        _ = entries.withLockedValue { $0.removeValue(forKey: installation) }
    }
}

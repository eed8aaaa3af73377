import Foundation
import NIOConcurrencyHelpers
import SecurePushRelayProtocol

/// The installations' public keys, ready to check request tokens, kept in memory so a request costs one
/// round trip to the database (`RelayStore.admit`) rather than three. A cached key is never trusted alone:
/// `admit` confirms in the same statement that its version is still the installation's, so a rotated key
/// or a disabled installation is refused from the next request on, in every relay process.
final class RelayKeyCache: Sendable {
    /// A key as cached: its version, its verifier and the installation's policy (a policy change moves the
    /// version, so it is reloaded with the key).
    struct Entry: Sendable {
        var keyVersion: Int
        var verifier: RelayTokenVerifier
        var criticalAllowed: Bool
    }

    /// The most installations kept (the cache starts over when full: an installation is cached only once a
    /// lookup found it, so unknown ids sent by anyone never fill it).
    let capacity: Int
    private let entries = NIOLockedValueBox<[UUID: Entry]>([:])
    /// Installation ids a lookup found no installation for, until when they count as unknown without another
    /// lookup: a request naming one costs no database call (issue 48: 1,554 requests a second naming made-up
    /// installations cost as many transactions). Bounded by `capacity` too.
    private let unknown = NIOLockedValueBox<[UUID: ContinuousClock.Instant]>([:])
    let unknownFor: Duration

    init(capacity: Int = 100_000, unknownFor: Duration = .seconds(10)) {
        self.capacity = max(1, capacity)
        self.unknownFor = unknownFor
    }

    /// The cached key of `installation`, if any.
    func cached(_ installation: UUID) -> Entry? {
        entries.withLockedValue { $0[installation] }
    }

    /// Loads the key of `installation` from `store` and caches it; `nil` when there is no such installation.
    /// An id found unknown within `unknownFor` is answered `nil` without a lookup (an installation added
    /// meanwhile is served once that time is over).
    func load(_ installation: UUID, from store: RelayStore) async throws -> Entry? {
        let now = ContinuousClock.now
        if let until = unknown.withLockedValue({ $0[installation] }), now < until { return nil }
        guard let credential = try await store.credential(of: installation) else {
            forget(installation)
            let until = now + unknownFor
            unknown.withLockedValue { unknown in
                if unknown.count >= capacity { unknown.removeAll() }
                unknown[installation] = until
            }
            return nil
        }
        _ = unknown.withLockedValue { $0.removeValue(forKey: installation) }
        let entry = Entry(
            keyVersion: credential.keyVersion, verifier: try await RelayTokenVerifier(publicKey: credential.publicKey),
            criticalAllowed: credential.criticalAllowed)
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

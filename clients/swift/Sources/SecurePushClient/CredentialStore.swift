import Foundation

/// Where the device credential lives between launches (and between an app and its extensions).
public protocol CredentialStore: Sendable {
    /// The stored credential, `nil` when none.
    func load() throws -> DeviceCredential?
    /// Stores (replaces) the credential.
    func save(_ credential: DeviceCredential) throws
    /// Removes the credential.
    func delete() throws
}

/// A credential held in memory only (tests, or a process that registers each time it starts).
public final class InMemoryCredentialStore: CredentialStore, @unchecked Sendable {
    private let lock = NSLock()
    private var credential: DeviceCredential?

    /// Creates a store, optionally holding a credential already.
    public init(_ credential: DeviceCredential? = nil) {
        self.credential = credential
    }

    public func load() throws -> DeviceCredential? {
        lock.withLock { credential }
    }

    public func save(_ credential: DeviceCredential) throws {
        lock.withLock { self.credential = credential }
    }

    public func delete() throws {
        lock.withLock { credential = nil }
    }
}

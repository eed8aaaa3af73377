import Synchronization

/// Lets a server's handler closure reach the fake that wraps it once the fake exists.
final class Holder<Value: Sendable>: Sendable {
    private let storage = Mutex<Value?>(nil)
    var value: Value? { storage.withLock { $0 } }
    func set(_ value: Value) { storage.withLock { $0 = value } }
}

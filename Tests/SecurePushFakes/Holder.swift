import NIOConcurrencyHelpers

/// Lets a server's handler closure reach the fake that wraps it once the fake exists.
final class Holder<Value: Sendable>: Sendable {
    private let storage = NIOLockedValueBox<Value?>(nil)
    var value: Value? { storage.withLockedValue { $0 } }
    func set(_ value: Value) { storage.withLockedValue { $0 = value } }
}

import NIOConcurrencyHelpers

/// A value shared between a row's disruption and its checks (closures that run at different times).
final class Shared<Value: Sendable>: Sendable {
    private let storage: NIOLockedValueBox<Value>

    init(_ value: Value) { storage = NIOLockedValueBox(value) }

    /// The current value.
    var value: Value {
        get { storage.withLockedValue { $0 } }
        set { storage.withLockedValue { $0 = newValue } }
    }
}

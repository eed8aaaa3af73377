import NIOCore

extension Duration {
    /// The same span as a NIO `TimeAmount`.
    package var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

import NIOCore
import SecurePushCore

extension Duration {
    /// The same span as a NIO `TimeAmount`.
    package var timeAmount: TimeAmount {
        .nanoseconds(wholeNanoseconds)
    }
}

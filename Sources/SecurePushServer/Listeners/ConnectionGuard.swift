import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import SecurePushAPI
import SecurePushCore

/// The connection limits of one listener, shared by its connections: at most `perAddress` open
/// connections per client address (a trusted proxy's connections are not counted: it carries many
/// clients), and a deadline for each request head.
final class ConnectionLimits: Sendable {
    /// Open connections per peer address (`SECUREPUSH_MAX_CONNECTIONS_PER_ADDRESS`).
    let perAddress: Int
    /// How long a connection may take to send a whole request head, from its opening or from the end of the
    /// previous response (`SECUREPUSH_HTTP_HEADER_TIMEOUT`): trickled or withheld headers are cut off.
    let headerTimeout: TimeAmount
    let trustedProxies: TrustedProxies
    private let open = NIOLockedValueBox<[String: Int]>([:])

    init(perAddress: Int, headerTimeout: Duration, trustedProxies: TrustedProxies) {
        self.perAddress = perAddress
        self.headerTimeout = .milliseconds(headerTimeout.wholeMilliseconds)
        self.trustedProxies = trustedProxies
    }

    /// Counts a new connection from `address`; false (not counted) when the address is at its limit.
    func admit(_ address: String) -> Bool {
        if trustedProxies.trusts(address) { return true }
        return open.withLockedValue { open in
            let count = open[address, default: 0]
            guard count < perAddress else { return false }
            open[address] = count + 1
            return true
        }
    }

    /// Forgets a connection `admit` counted.
    func release(_ address: String) {
        if trustedProxies.trusts(address) { return }
        open.withLockedValue { open in
            let count = open[address, default: 1] - 1
            open[address] = count > 0 ? count : nil
        }
    }

    /// Addresses with an open connection now (the table's size; for tests).
    var addresses: Int { open.withLockedValue { $0.count } }
}

/// An HTTP/1.1 child channel with `ConnectionGuard` in front of Hummingbird's HTTP/1 pipeline.
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value
    let inner: HTTP1Channel
    let limits: ConnectionLimits

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = self.limits
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(limits: limits, logger: logger), position: .first)
        }.flatMap {
            inner.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Closes a connection at once when its address already holds `perAddress` connections, and closes one
/// whose request head (up to the blank line) has not fully arrived within `headerTimeout`: counted from the
/// connection's opening for the first request, and from the first byte of each later request (a keep-alive
/// connection idle between requests is left to the idle timeout, as a load balancer's pool expects). Works
/// on raw bytes, before HTTP parsing.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private enum Phase {
        /// Between requests: nothing of the next request has arrived.
        case idle
        /// A request head is arriving; the deadline is armed.
        case readingHead
        /// The head is complete; the request is being handled.
        case inRequest
    }

    private let limits: ConnectionLimits
    private let logger: Logger
    private var address: String?
    private var deadline: Scheduled<Void>?
    /// The last bytes seen, to find a blank line split across reads.
    private var tail: UInt32 = 0
    private var phase = Phase.readingHead

    init(limits: ConnectionLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if phase == .idle, buffer.readableBytes > 0 {
            phase = .readingHead
            tail = 0
            arm(context)
        }
        if phase == .readingHead, sawBlankLine(buffer) {
            phase = .inRequest
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // A response is going out: the next request's head gets its deadline from its first byte.
        if phase == .inRequest { phase = .idle }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard address == nil else { return }
        let peer = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard limits.admit(peer) else {
            logger.notice(
                "connection refused: too many open connections from one address", metadata: ["http.connection_limit": "\(limits.perAddress)"])
            context.close(promise: nil)
            return
        }
        address = peer
        arm(context)
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: limits.headerTimeout) {
            channel.close(promise: nil)
        }
    }

    private func stop() {
        deadline?.cancel()
        deadline = nil
        if let address {
            limits.release(address)
            self.address = nil
        }
    }

    private func sawBlankLine(_ buffer: ByteBuffer) -> Bool {
        let blankLine: UInt32 = 0x0D0A_0D0A
        for byte in buffer.readableBytesView {
            tail = (tail << 8) | UInt32(byte)
            if tail == blankLine { return true }
        }
        return false
    }
}

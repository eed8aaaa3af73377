import Foundation
import NIOCore

/// What a connection handler (HTTP/1.1 or HTTP/2 stream) needs to answer its requests: the connection's
/// number, the server's handler, and the in-flight count, kept right for stalled requests too.
struct FakeAnswerer {
    /// Which TCP connection the requests arrive on (numbered from 1 per server).
    let connectionID: Int
    private let handler: FakeHTTPServer.Handler
    private let traffic: FakeTraffic
    /// A request stalled on purpose: in flight until the client gives up (closes the connection or resets the stream).
    private var stalled = false

    /// An answerer for one connection (or stream) of a server.
    init(connectionID: Int, traffic: FakeTraffic, handler: @escaping FakeHTTPServer.Handler) {
        self.connectionID = connectionID
        self.traffic = traffic
        self.handler = handler
    }

    /// Asks the server's handler what to do with `request`; a stall is remembered until `clientGone()`.
    mutating func reply(to request: FakeRequest) -> FakeReply {
        let reply = handler(request)
        if case .stall = reply { stalled = true }
        return reply
    }

    /// The answer has been written: the request is no longer in flight.
    func answered() {
        traffic.finished()
    }

    /// The client closed the connection (or the stream): a stalled request is no longer in flight.
    mutating func clientGone() {
        if stalled {
            stalled = false
            traffic.stallEnded()
        }
    }
}

/// A connection handler (HTTP/1.1 or HTTP/2 stream) that answers through a `FakeAnswerer`.
protocol FakeAnsweringHandler: ChannelInboundHandler {
    /// The handler's answerer.
    var answerer: FakeAnswerer { get set }
}

extension FakeAnsweringHandler {
    /// The client went away: a request stalled on this handler is no longer in flight.
    func channelInactive(context: ChannelHandlerContext) {
        answerer.clientGone()
        context.fireChannelInactive()
    }
}

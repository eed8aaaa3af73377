import Foundation
import NIOConcurrencyHelpers

/// One request a fake server received and what it answered.
public struct FakeExchange: Sendable {
    /// The request as received.
    public var request: FakeRequest
    /// When the server had read the whole request (before it chose an answer).
    public var receivedAt: Date
    /// The status answered, or `nil` when the request was stalled (never answered).
    public var status: Int?
    /// The `Retry-After` header of the answer, when it had one.
    public var retryAfter: String?
}

/// What a fake server saw on the wire: every exchange in arrival order and how many requests were
/// in flight at once (read, not yet answered or given up by the client), with the high-water mark.
public final class FakeTraffic: Sendable {
    private struct State {
        var exchanges: [FakeExchange] = []
        var inFlight = 0
        var maxInFlight = 0
        var stalled = 0
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// Every exchange so far, in arrival order.
    public var exchanges: [FakeExchange] { state.withLockedValue { $0.exchanges } }
    /// Requests in flight now.
    public var inFlight: Int { state.withLockedValue { $0.inFlight } }
    /// The most requests in flight at once since the start (or the last `resetMaxInFlight()`).
    public var maxInFlight: Int { state.withLockedValue { $0.maxInFlight } }

    /// Requests stalled on purpose and still held open (the client has not closed their stream or connection).
    public var stalled: Int { state.withLockedValue { $0.stalled } }

    /// Starts the high-water mark again from the requests in flight now.
    public func resetMaxInFlight() {
        state.withLockedValue { $0.maxInFlight = $0.inFlight }
    }

    /// Wraps a handler so that every request is counted in flight and its exchange recorded. The
    /// connection handler calls `finished()` once the answer is written or the stream closed unanswered.
    func recording(_ handler: @escaping FakeHTTPServer.Handler) -> FakeHTTPServer.Handler {
        { request in
            let receivedAt = Date()
            self.state.withLockedValue { state in
                state.inFlight += 1
                state.maxInFlight = max(state.maxInFlight, state.inFlight)
            }
            let reply = handler(request)
            let exchange: FakeExchange
            switch reply {
            case .stall:
                exchange = FakeExchange(request: request, receivedAt: receivedAt, status: nil, retryAfter: nil)
                self.state.withLockedValue { $0.stalled += 1 }
            case .response(let status, let headers, _):
                let retryAfter = headers.first { $0.0.lowercased() == "retry-after" }?.1
                exchange = FakeExchange(request: request, receivedAt: receivedAt, status: status, retryAfter: retryAfter)
            }
            self.state.withLockedValue { $0.exchanges.append(exchange) }
            return reply
        }
    }

    /// One request is no longer in flight.
    func finished() {
        state.withLockedValue { $0.inFlight -= 1 }
    }

    /// One stalled request is no longer held: its client gave up.
    func stallEnded() {
        state.withLockedValue { state in
            state.inFlight -= 1
            state.stalled -= 1
        }
    }
}

import NIOConcurrencyHelpers
import SecurePushCore
import Testing

@testable import SecurePushProviders

@Suite("Token renewal loop")
struct TokenRenewalTests {
    /// Hands out tokens t1, t2, ... and records what the loop did.
    final class Script: Sendable {
        let events = NIOLockedValueBox<[String]>([])
        let issued = NIOLockedValueBox(0)

        func token() -> String {
            let next = issued.withLockedValue { count in
                count += 1
                return count
            }
            events.withLockedValue { $0.append("token t\(next)") }
            return "t\(next)"
        }
        func record(_ event: String) { events.withLockedValue { $0.append(event) } }
        var log: [String] { events.withLockedValue { $0 } }
    }

    static let stillRefused = PushResult.retry(after: nil, reason: "still refused")

    @Test("a result is returned as it is, without renewal")
    func result() async {
        let script = Script()
        let result = await TokenRenewal.send(
            token: { script.token() },
            attempt: { token in
                script.record("send \(token)"); return .result(.sent(messageID: "m"))
            },
            invalidate: { script.record("invalidate \($0)") },
            stillRefused: Self.stillRefused,
            renewing: { script.record("renewing") })
        #expect(result == .sent(messageID: "m"))
        #expect(script.log == ["token t1", "send t1"])
    }

    @Test("a refused token is invalidated and renewed once; the second send's result counts")
    func renewOnce() async {
        let script = Script()
        let result = await TokenRenewal.send(
            token: { script.token() },
            attempt: { token in
                script.record("send \(token)")
                return token == "t1" ? .renewTokenAndRetry : .result(.sent(messageID: nil))
            },
            invalidate: { script.record("invalidate \($0)") },
            stillRefused: Self.stillRefused,
            renewing: { script.record("renewing") })
        #expect(result == .sent(messageID: nil))
        #expect(script.log == ["token t1", "send t1", "invalidate t1", "renewing", "token t2", "send t2"])
    }

    @Test("a renewed token refused again is `stillRefused`, not a loop")
    func refusedTwice() async {
        let script = Script()
        let result = await TokenRenewal.send(
            token: { script.token() },
            attempt: { token in
                script.record("send \(token)"); return .renewTokenAndRetry
            },
            invalidate: { script.record("invalidate \($0)") },
            stillRefused: Self.stillRefused,
            renewing: { script.record("renewing") })
        #expect(result == Self.stillRefused)
        #expect(script.log == ["token t1", "send t1", "invalidate t1", "renewing", "token t2", "send t2", "invalidate t2"])
    }

    @Test("no token: its result, and nothing is sent")
    func noToken() async {
        let script = Script()
        let result = await TokenRenewal.send(
            token: { () throws(TokenUnavailable) -> String in throw TokenUnavailable(result: .failed(reason: "refused")) },
            attempt: { token in
                script.record("send \(token)"); return .result(.sent(messageID: nil))
            },
            invalidate: { script.record("invalidate \($0)") },
            stillRefused: Self.stillRefused)
        #expect(result == .failed(reason: "refused"))
        #expect(script.log.isEmpty)
    }
}

import SecurePushCore
import Testing

@testable import SecurePushProviders

@Suite("WNS response classifier")
struct WNSResponseClassifierTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var status: Int
        var retryAfter: Duration? = nil
        var expected: ProviderVerdict
        var testDescription: String { "\(status)\(retryAfter.map { " Retry-After \($0)" } ?? "") → \(expected)" }
    }

    static let throttleBackoff: Duration = .seconds(60)

    static let rows: [Row] = [
        Row(status: 200, expected: .result(.sent(messageID: "msg-1"))),
        Row(status: 201, expected: .result(.sent(messageID: "msg-1"))),
        Row(status: 401, expected: .renewTokenAndRetry),
        Row(status: 404, expected: .result(.tokenInvalid(reason: "WNS 404"))),
        Row(status: 410, expected: .result(.tokenInvalid(reason: "WNS 410"))),
        Row(status: 406, expected: .result(.retry(after: .seconds(60), reason: "WNS 406 throttled", scope: .provider))),
        Row(status: 406, retryAfter: .seconds(90), expected: .result(.retry(after: .seconds(90), reason: "WNS 406 throttled", scope: .provider))),
        Row(status: 429, expected: .result(.retry(after: nil, reason: "WNS 429", scope: .provider))),
        Row(status: 429, retryAfter: .seconds(5), expected: .result(.retry(after: .seconds(5), reason: "WNS 429", scope: .provider))),
        Row(status: 500, expected: .result(.retry(after: nil, reason: "WNS 500", scope: .provider))),
        Row(status: 503, retryAfter: .seconds(10), expected: .result(.retry(after: .seconds(10), reason: "WNS 503", scope: .provider))),
        Row(status: 599, expected: .result(.retry(after: nil, reason: "WNS 599", scope: .provider))),
        Row(status: 400, expected: .result(.failed(reason: "WNS 400"))),
        Row(status: 403, expected: .result(.failed(reason: "WNS 403"))),
        Row(status: 413, expected: .result(.failed(reason: "WNS 413"))),
        // Retry-After does not turn a permanent answer into a retry.
        Row(status: 400, retryAfter: .seconds(30), expected: .result(.failed(reason: "WNS 400"))),
    ]

    @Test("every WNS answer maps to one verdict", arguments: rows)
    func row(_ row: Row) {
        let verdict = WNSResponseClassifier.classify(
            status: row.status, retryAfter: row.retryAfter, throttleBackoff: Self.throttleBackoff, msgID: "msg-1")
        #expect(verdict == row.expected)
    }
}

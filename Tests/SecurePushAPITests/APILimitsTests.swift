import Foundation
import SecurePushCore
import SecurePushStore
import Testing

@testable import SecurePushAPI

/// The API limits' defaults are the ones the configuration table (docs/configuration.md) documents.
@Suite("API limits defaults")
struct APILimitsTests {
    /// The backticked defaults of the configuration row (docs/configuration.md) whose first cell is exactly `names`.
    static func documented(_ names: String) throws -> [String] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let row = try #require(
            text.split(separator: "\n").map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
                .first { $0.count >= 2 && $0[0] == names }, "docs/configuration.md has no row \(names)")
        return row[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// `10s`, `15m`, `2h` as a duration.
    static func duration(_ text: String) -> Duration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()) else { return nil }
        return .seconds(count * unit)
    }

    @Test("each default matches the configuration table in docs/configuration.md")
    func defaultsAreDocumented() throws {
        let limits = APILimits()
        let auth = try Self.documented("`SECUREPUSH_AUTH_FREE_FAILURES` / `SECUREPUSH_AUTH_FAILURE_WINDOW`")
        #expect(auth.count == 2)
        #expect(auth.first == "\(limits.authThrottle.freeFailures)")
        #expect(auth.last.flatMap(Self.duration) == limits.authThrottle.window)
        let block = try Self.documented("`SECUREPUSH_AUTH_BLOCK` / `SECUREPUSH_AUTH_BLOCK_MAX`").map(Self.duration)
        #expect(block == [limits.authThrottle.baseBlock, limits.authThrottle.maxBlock])
        #expect(try Self.documented("`SECUREPUSH_DEVICE_READ_RATE` / `_BURST`") == ["10", "300"])
        #expect(limits.deviceReads == RateLimit(perSecond: 10, burst: 300))
        #expect(try Self.documented("`SECUREPUSH_USER_READ_RATE` / `_BURST`") == ["30", "1000"])
        #expect(limits.userReads == RateLimit(perSecond: 30, burst: 1000))
        let bytes = try Self.documented("`SECUREPUSH_MAX_BODY_BYTES` / `SECUREPUSH_MAX_HEADER_BYTES`")
        #expect(bytes == ["\(limits.maxRequestBodyBytes)", "\(limits.maxHeaderBytes)"])
        let timeouts = try Self.documented("`SECUREPUSH_HTTP_READ_TIMEOUT` / `SECUREPUSH_HTTP_IDLE_TIMEOUT`").map(Self.duration)
        #expect(timeouts == [limits.bodyReadTimeout, limits.idleTimeout])
        #expect(try Self.documented("`SECUREPUSH_HTTP_HEADER_TIMEOUT`").map(Self.duration) == [limits.headerTimeout])
        #expect(try Self.documented("`SECUREPUSH_MAX_CONNECTIONS`") == ["\(limits.maxConnections)"])
        #expect(try Self.documented("`SECUREPUSH_MAX_CONNECTIONS_PER_ADDRESS`") == ["\(limits.maxConnectionsPerAddress)"])
        #expect(try Self.documented("`SECUREPUSH_TRUSTED_PROXIES`").isEmpty)
        #expect(limits.trustedProxies.networks.isEmpty)
    }

    @Test("the defaults themselves: 16 KiB bodies and headers, 10 s body and header timeouts, 1000 of 16384 connections per address")
    func defaults() {
        let limits = APILimits()
        #expect(limits.maxRequestBodyBytes == 16_384)
        #expect(limits.maxHeaderBytes == 16_384)
        #expect(limits.bodyReadTimeout == .seconds(10))
        #expect(limits.headerTimeout == .seconds(10))
        #expect(limits.idleTimeout == .seconds(60))
        #expect(limits.maxConnectionsPerAddress < limits.maxConnections)
        #expect(limits.authThrottle == AuthThrottlePolicy(freeFailures: 5, baseBlock: .seconds(1), maxBlock: .seconds(900), window: .seconds(900)))
    }
}

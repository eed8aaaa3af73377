import Foundation
import SecurePushCore
import SecurePushRelayProtocol
import Testing

@testable import SecurePushProviders

/// What a self-hosted server makes of the relay's refusals (found by the failover matrix's relay route: a device
/// registered just before the load was retired by its first push, because the relay checked the binding before
/// the handover committed and the server read its outbox after).
@Suite("Relay refusals on the self-hosted side")
struct RelayRefusalTests {
    static let refused = RelayOutcome.unregistered.pushResult

    @Test("a token the relay refuses is retried while its handover is pending, while that is unknown, and at the first attempt; retired after")
    func unregisteredToken() {
        func isRetry(_ result: PushResult) -> Bool {
            if case .retry(_, _, let scope) = result { return scope == .device }
            return false
        }
        func isTokenInvalid(_ result: PushResult) -> Bool {
            if case .tokenInvalid = result { return true }
            return false
        }
        #expect(isTokenInvalid(Self.refused), "the relay's answer alone retires the device")
        for attempt in [1, 2, 7] {
            #expect(isRetry(RelayProvider.refused(Self.refused, attempt: attempt, pending: true)), "pending, attempt \(attempt)")
            #expect(isRetry(RelayProvider.refused(Self.refused, attempt: attempt, pending: nil)), "unknown, attempt \(attempt)")
        }
        #expect(isRetry(RelayProvider.refused(Self.refused, attempt: 1, pending: false)), "the handover may have raced the first attempt")
        #expect(isTokenInvalid(RelayProvider.refused(Self.refused, attempt: 2, pending: false)), "refused twice, nothing pending: retired")
    }

    @Test("a refusal of the push alone (critical urgency not allowed, a platform not relayed) fails that push and keeps the device")
    func pushOnlyRefusals() {
        for outcome in [RelayOutcome.criticalRefused, .notRelayed("wns")] {
            guard case .failed(let reason) = outcome.pushResult else {
                Issue.record("\(outcome.reason ?? "") is not a failed push: \(outcome.pushResult)")
                continue
            }
            #expect(reason.hasPrefix("relay refused"))
        }
        // A refusal the relay gives for a malformed token stays the token's.
        guard case .tokenInvalid = RelayOutcome(outcome: .refused, reason: "token: not 64 hexadecimal digits").pushResult else {
            Issue.record("a malformed token's refusal retires the device")
            return
        }
    }
}

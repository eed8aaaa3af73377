import Logging
import NIOConcurrencyHelpers
import SecurePushCore
import SecurePushRelayProtocol
import ServiceLifecycle

/// Hands the queued registration changes (`securepush.relay_outbox`) to the relay, oldest first, every half
/// second while any wait; one process at a time across the fleet. A relay that is down leaves them queued
/// (registrations never fail for it) and is tried again; the first failure and the recovery are logged.
public struct RelaySyncService: Service {
    let outbox: any RelayOutbox
    let relay: any RelayRegistrar
    let logger: Logger

    /// Changes per relay request.
    static let batch = 1000

    /// Hands `outbox`'s changes to `relay`.
    public init(outbox: any RelayOutbox, relay: any RelayRegistrar, logger: Logger) {
        self.outbox = outbox
        self.relay = relay
        self.logger = logger
    }

    public func run() async throws {
        let (outbox, relay, logger) = (self.outbox, self.relay, self.logger)
        let failing = NIOLockedValueBox(false)
        try await runPeriodically(every: .milliseconds(500)) { _ in
            do {
                var handed = 0
                while true {
                    let count = try await outbox.drain(limit: Self.batch) { changes in
                        try await relay.changeTokens(Self.tokenChanges(changes))
                    }
                    handed += count
                    if count < Self.batch { break }
                }
                if failing.withLockedValue({ was in
                    defer { was = false }; return was
                }) {
                    logger.notice("relay registrations handed over again", metadata: ["relay.changes": "\(handed)"])
                }
            } catch {
                if !failing.withLockedValue({ was in
                    defer { was = true }; return was
                }) {
                    logger.warning(
                        "relay registrations could not be handed over; they stay queued and are retried",
                        metadata: ["relay.error": "\(String(describing: type(of: error)))"])
                }
            }
        }
    }

    /// The changes as one request: per token, its last change wins (a bind then a release in one batch is a release).
    static func tokenChanges(_ changes: [RelayRegistrationChange]) -> RelayTokenChanges {
        var last: [RelayToken: RelayRegistrationChange.Action] = [:]
        var order: [RelayToken] = []
        for change in changes {
            let token = RelayToken(platform: change.platform, token: change.token)
            if last[token] == nil { order.append(token) }
            last[token] = change.action
        }
        return RelayTokenChanges(bind: order.filter { last[$0] == .bind }, release: order.filter { last[$0] == .release })
    }
}

import Foundation
import Logging
import SecurePushCore
import SecurePushDispatcher
import SecurePushRelayProtocol
import ServiceLifecycle
import Synchronization
import Testing

/// The relay sync through its seams: an outbox and a relay in memory, no database, no network.
@Suite("Relay sync")
struct RelaySyncServiceTests {
    /// A queue of changes that, like `securepush.relay_outbox`, keeps what a failed handover did not deliver.
    final class MemoryOutbox: RelayOutbox {
        let queued: Mutex<[RelayRegistrationChange]>
        init(_ changes: [RelayRegistrationChange]) { queued = Mutex(changes) }

        func drain(limit: Int, _ deliver: @Sendable ([RelayRegistrationChange]) async throws -> Void) async throws -> Int {
            let taken = Array(queued.withLock { $0.prefix(limit) })
            guard !taken.isEmpty else { return 0 }
            try await deliver(taken)
            queued.withLock { $0.removeFirst(taken.count) }
            return taken.count
        }
    }

    /// A relay that refuses the first `refusals` requests, then records each request it takes.
    final class MemoryRelay: RelayRegistrar {
        let state: Mutex<(refusals: Int, taken: [RelayTokenChanges])>
        init(refusals: Int) { state = Mutex((refusals, [])) }

        func changeTokens(_ changes: RelayTokenChanges) async throws {
            try state.withLock { state in
                if state.refusals > 0 {
                    state.refusals -= 1
                    throw Refused()
                }
                state.taken.append(changes)
            }
        }

        struct Refused: Error {}
    }

    static func change(_ id: Int64, _ token: String, _ action: RelayRegistrationChange.Action) -> RelayRegistrationChange {
        RelayRegistrationChange(id: id, platform: "apns", token: token, action: action)
    }

    @Test("a refused handover keeps the changes queued; retried, they reach the relay in batches, the last change of a token winning")
    func handsOverInOrder() async throws {
        // 1,500 binds (two requests: 1,000 and 500), then a bind and a release of "a" and a release then a bind of "b".
        var changes = (1...1500).map { Self.change(Int64($0), "t\($0)", .bind) }
        changes += [Self.change(1501, "a", .bind), Self.change(1502, "a", .release)]
        changes += [Self.change(1503, "b", .release), Self.change(1504, "b", .bind)]
        let outbox = MemoryOutbox(changes)
        let relay = MemoryRelay(refusals: 2)
        var logger = Logger(label: "securepush.test.relay-sync")
        logger.logLevel = .critical
        let sync = RelaySyncService(outbox: outbox, relay: relay, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: sync)], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await withDeadline(.seconds(60)) { try await group.run() } }
            try await DispatcherLaneTests.eventually("the outbox is empty") { outbox.queued.withLock { $0.isEmpty } }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let taken = relay.state.withLock { $0.taken }
        #expect(relay.state.withLock { $0.refusals } == 0, "both refusals were met and retried")
        #expect(taken.map { $0.bind.count + $0.release.count } == [1000, 502], "504 changes of 502 tokens")
        #expect(taken.first?.bind.map(\.token) == (1...1000).map { "t\($0)" }, "in the queue's order")
        let last = try #require(taken.last)
        #expect(last.bind.map(\.token) == (1001...1500).map { "t\($0)" } + ["b"])
        #expect(last.release.map(\.token) == ["a"])
    }
}

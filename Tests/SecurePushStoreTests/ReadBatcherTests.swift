import Foundation
import NIOConcurrencyHelpers
import Synchronization
import Testing

@testable import SecurePushStore

@Suite("Read batcher")
struct ReadBatcherTests {
    /// A runner that holds its first statement until released and records every statement's fetches.
    final class GatedRunner: Sendable {
        let statements = NIOLockedValueBox<[[UUID]]>([])
        let release: AsyncStream<Void>
        let releaser: AsyncStream<Void>.Continuation

        init() { (release, releaser) = AsyncStream.makeStream() }

        func run(_ requests: [ReadBatcher.Request]) async throws -> [DeviceAccess<[FetchedNotification]>] {
            let first = statements.withLockedValue { recorded in
                recorded.append(requests.map(\.proof.deviceID))
                return recorded.count == 1
            }
            if first {
                for await _ in release { break }
            }
            return requests.map { request in
                .granted(
                    AuthenticatedDevice(deviceID: request.proof.deviceID, userID: request.proof.deviceID.uuidString),
                    request.ids.map { FetchedNotification(id: $0, result: .notFound) })
            }
        }
    }

    static func request(_ ids: Int = 1) -> ReadBatcher.Request {
        ReadBatcher.Request(proof: DeviceProof(deviceID: UUID(), secret: [1, 2, 3], throttleKeys: ["addr:x"]), ids: (0..<ids).map { _ in UUID() })
    }

    @Test("fetches that arrive while the statement runs share the next one, and each gets its own result")
    func waitingFetchesShareOneStatement() async throws {
        let batcher = ReadBatcher(statements: 1)
        let runner = GatedRunner()
        let requests = (0..<6).map { _ in Self.request() }
        try await withThrowingTaskGroup(of: (UUID, UUID?).self) { group in
            for request in requests {
                group.addTask {
                    let access = try await batcher.fetch(request) { try await runner.run($0) }
                    guard case .granted(let device, let results) = access else { return (request.proof.deviceID, nil) }
                    #expect(results.map(\.id) == request.ids)
                    return (request.proof.deviceID, device.deviceID)
                }
            }
            // The first statement holds; the other five wait for it, then all go in the next one.
            while await batcher.waitingCount < 5 { await Task.yield() }
            runner.releaser.yield()
            for try await (asked, answered) in group { #expect(asked == answered, "each fetch gets the result of its own request") }
        }
        let statements = runner.statements.withLockedValue { $0 }
        #expect(statements.count == 2)
        #expect(statements.map(\.count) == [1, 5])
        #expect(Set(statements.flatMap { $0 }) == Set(requests.map(\.proof.deviceID)))
        #expect(await batcher.waitingCount == 0)
    }

    @Test("a statement carries at most its share of fetches and ids; the rest lead the next")
    func statementsAreBounded() async throws {
        let batcher = ReadBatcher(statements: 1, requestsPerStatement: 3, idsPerStatement: 10)
        let runner = GatedRunner()
        let requests = [Self.request()] + (0..<7).map { _ in Self.request(4) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { _ = try await batcher.fetch(requests[0]) { try await runner.run($0) } }
            while runner.statements.withLockedValue({ $0.isEmpty }) { await Task.yield() }
            for request in requests.dropFirst() {
                group.addTask { _ = try await batcher.fetch(request) { try await runner.run($0) } }
            }
            while await batcher.waitingCount < 7 { await Task.yield() }
            runner.releaser.yield()
            try await group.waitForAll()
        }
        let sizes = runner.statements.withLockedValue { $0.map(\.count) }
        // 7 waiting fetches of 4 ids each: at most 10 ids (2 fetches) per statement.
        #expect(sizes == [1, 2, 2, 2, 1])
    }

    @Test("a failed statement fails every fetch it carried, and the next fetch still runs")
    func failureReachesEveryCarriedFetch() async throws {
        struct Broken: Error {}
        let batcher = ReadBatcher(statements: 1)
        let (release, releaser) = AsyncStream<Void>.makeStream()
        let calls = Atomic(0)
        let runner: ReadBatcher.Runner = { requests in
            if calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                for await _ in release { break }
                throw Broken()
            }
            return requests.map { _ in .refused(blockedFor: 0) }
        }
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do {
                        _ = try await batcher.fetch(Self.request(), runner: runner)
                        return false
                    } catch is Broken { return true }
                }
                while calls.load(ordering: .sequentiallyConsistent) == 0 { await Task.yield() }
            }
            while await batcher.waitingCount < 2 { await Task.yield() }
            releaser.yield()
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        // The first statement failed alone (the others were waiting, not carried); they ran in the next.
        #expect(failures == 1)
        #expect(calls.load(ordering: .sequentiallyConsistent) == 2)
        guard case .refused = try await batcher.fetch(Self.request(), runner: runner) else {
            Issue.record("the batcher still runs fetches after a failure")
            return
        }
    }

    @Test("a leading fetch that is cancelled (its deadline) does not cancel the statement that carries the others")
    func leaderCancellationSparesCarriedFetches() async throws {
        let batcher = ReadBatcher(statements: 1)
        let (firstGate, openFirst) = AsyncStream<Void>.makeStream()
        let (secondGate, openSecond) = AsyncStream<Void>.makeStream()
        let calls = Atomic(0)
        // Each statement waits for its gate, then fails as a cancelled database call does.
        let runner: ReadBatcher.Runner = { requests in
            let call = calls.add(1, ordering: .sequentiallyConsistent).newValue
            for await _ in call == 1 ? firstGate : secondGate { break }
            try Task.checkCancellation()
            return requests.map { .granted(AuthenticatedDevice(deviceID: $0.proof.deviceID, userID: "u"), []) }
        }
        let first = Task { try await batcher.fetch(Self.request(), runner: runner) }
        while calls.load(ordering: .sequentiallyConsistent) == 0 { await Task.yield() }
        // The leader of the second statement, and a fetch it will carry.
        let leader = Task { try await batcher.fetch(Self.request(), runner: runner) }
        while await batcher.waitingCount < 1 { await Task.yield() }
        let carried = Task { try await batcher.fetch(Self.request(), runner: runner) }
        while await batcher.waitingCount < 2 { await Task.yield() }
        openFirst.yield()
        _ = try await first.value
        while calls.load(ordering: .sequentiallyConsistent) < 2 { await Task.yield() }
        #expect(await batcher.waitingCount == 0, "the second statement carries the third fetch")
        leader.cancel()
        openSecond.yield()
        guard case .granted = try await carried.value else {
            Issue.record("the carried fetch lost its result")
            return
        }
    }
}

import Foundation

/// Gathers the device fetches that arrive while earlier ones are in the database and runs each gathering
/// as one statement (`securepush.device_fetch_batch`): one function call, one trigger firing and one commit
/// for all of them. At most `statements` run at once; a fetch that finds them all busy waits, and the first
/// one to finish hands the next statement to the oldest waiting fetch, which takes every fetch waiting then
/// (up to `requestsPerStatement`) along with its own. So under light load each fetch is its own statement
/// and gains no delay; under a fetch storm the statements grow instead of queueing.
///
/// No task of its own: each statement runs in the task of the fetch that leads it, and the others it
/// carries wait on continuations that it resumes with their results (or its error).
actor ReadBatcher {
    /// One fetch: what it asks and who it is.
    struct Request: Sendable {
        var proof: DeviceProof
        var ids: [UUID]
    }

    /// Runs one statement for the given fetches, returning one access per fetch in the same order.
    typealias Runner = @Sendable ([Request]) async throws -> [DeviceAccess<[FetchedNotification]>]

    private enum Turn {
        case done(DeviceAccess<[FetchedNotification]>)
        case lead
    }

    private struct Waiting {
        var request: Request
        var continuation: CheckedContinuation<Turn, any Error>
    }

    private let statements: Int
    private let requestsPerStatement: Int
    private let idsPerStatement: Int
    private var running = 0
    private var waiting: [Waiting] = []
    private var waitingStart = 0

    /// At most `statements` statements at once, each carrying at most `requestsPerStatement` fetches and
    /// `idsPerStatement` ids (one fetch asking for more still runs, alone).
    init(statements: Int, requestsPerStatement: Int = 64, idsPerStatement: Int = 1_000) {
        precondition(statements > 0 && requestsPerStatement > 0)
        self.statements = statements
        self.requestsPerStatement = requestsPerStatement
        self.idsPerStatement = idsPerStatement
    }

    /// Fetches waiting for a statement (the tests watch it).
    var waitingCount: Int { waiting.count - waitingStart }

    /// Runs `request` in a statement of its own or together with others.
    func fetch(_ request: Request, runner: @escaping Runner) async throws -> DeviceAccess<[FetchedNotification]> {
        if running < statements {
            running += 1
            return try await lead(request, runner: runner)
        }
        let turn = try await withCheckedThrowingContinuation { continuation in
            waiting.append(Waiting(request: request, continuation: continuation))
        }
        switch turn {
        case .done(let access):
            return access
        case .lead:
            return try await lead(request, runner: runner)
        }
    }

    /// Runs `own` with the fetches waiting now, resumes them, and passes the statement on.
    private func lead(_ own: Request, runner: @escaping Runner) async throws -> DeviceAccess<[FetchedNotification]> {
        let carried = takeWaiting(after: own.ids.count)
        defer { passOn() }
        let results: [DeviceAccess<[FetchedNotification]>]
        do {
            // The statement runs in a task of its own, which the leading fetch's deadline or cancellation
            // does not cancel: that ends the leader's wait (its 503), never the statement the carried fetches
            // ride in (each would get its CancellationError, a 500: seen in the paced 200,000-user broadcast).
            // The leader still waits for the statement (the database's statement_timeout bounds it) before
            // handing the turn on, so at most `statements` run at once.
            let requests = [own] + carried.map(\.request)
            results = try await Task { try await runner(requests) }.value
        } catch {
            for other in carried { other.continuation.resume(throwing: error) }
            throw error
        }
        for (index, other) in carried.enumerated() { other.continuation.resume(returning: .done(results[index + 1])) }
        return results[0]
    }

    /// Removes and returns the oldest waiting fetches that fit beside a fetch of `ownIDs` ids.
    private func takeWaiting(after ownIDs: Int) -> [Waiting] {
        var taken: [Waiting] = []
        var ids = ownIDs
        while waitingStart < waiting.count, taken.count + 1 < requestsPerStatement {
            let next = waiting[waitingStart]
            guard ids + next.request.ids.count <= idsPerStatement else { break }
            ids += next.request.ids.count
            taken.append(next)
            waitingStart += 1
        }
        compact()
        return taken
    }

    /// Hands the statement to the oldest waiting fetch, or frees it.
    private func passOn() {
        guard waitingStart < waiting.count else {
            running -= 1
            return
        }
        let next = waiting[waitingStart]
        waitingStart += 1
        compact()
        next.continuation.resume(returning: .lead)
    }

    private func compact() {
        if waitingStart == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingStart = 0
        } else if waitingStart > 256, waitingStart * 2 > waiting.count {
            waiting.removeFirst(waitingStart)
            waitingStart = 0
        }
    }
}

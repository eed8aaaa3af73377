import AsyncHTTPClient
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import SecurePushCore
import SecurePushRelayProtocol
import ServiceLifecycle

/// A self-hosted server's connection to a push relay (docs/relay.md): pushes of every relayed platform go
/// out in batches (`POST /v1/relay/pushes`, at most `maxBatch` each, whatever gathered while
/// the previous requests were out, with at most `maxRequests` in flight), and registrations are handed over
/// (`POST /v1/relay/tokens`). Every request carries a fresh ES256 token signed with the installation's key.
///
/// A `Service`: `run()` sends the batches; it must run while the dispatcher does (and stop after it).
public final class RelayClient: Service, RelayRegistrar, Sendable {
    private struct Waiting {
        var push: RelayPush
        var continuation: CheckedContinuation<PushResult, Never>
    }

    private struct State {
        var next = 0
        var queued: [Int] = []
        var waiting: [Int: Waiting] = [:]
        var running = true
    }

    /// The relay's base URL (no trailing slash).
    public let url: String
    public let installation: UUID
    let key: InstallationKey
    let httpClient: HTTPClient
    let timeout: Duration
    let maxRequests: Int
    let logger: Logger
    private let state = NIOLockedValueBox(State())
    /// The installation's key, made ready by the first request.
    private let signer = NIOLockedValueBox<RelayTokenSigner?>(nil)
    private let queuedSignal = WakeSignal()
    private let requestEnded = WakeSignal()

    /// A client of the relay at `url` for `installation`.
    public init(
        url: String, installation: UUID, key: InstallationKey, httpClient: HTTPClient, timeout: Duration = .seconds(10), maxRequests: Int = 8,
        logger: Logger
    ) {
        self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.installation = installation
        self.key = key
        self.httpClient = httpClient
        self.timeout = timeout
        self.maxRequests = max(1, maxRequests)
        self.logger = logger
    }

    /// Sends one push through the relay and returns what the platform (or the relay) said. Cancelled, it
    /// answers `.retry` at once (a batch already out may still deliver it: a push is an id, harmless twice).
    func send(_ push: Push) async -> PushResult {
        // Sealed here: the relay carries the sealed value, never the preview or the device's key.
        let relayed = RelayPush(push, sealed: PreviewSealer.sealed(push))
        let id = state.withLockedValue { state -> Int in
            state.next += 1
            return state.next
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PushResult, Never>) in
                let accepted = state.withLockedValue { state -> Bool in
                    guard state.running, !Task.isCancelled else { return false }
                    state.waiting[id] = Waiting(push: relayed, continuation: continuation)
                    state.queued.append(id)
                    return true
                }
                if accepted {
                    queuedSignal.signal()
                } else {
                    continuation.resume(returning: .retry(after: nil, reason: "relay client stopped or send cancelled", scope: .device))
                }
            }
        } onCancel: {
            self.resume([id: .retry(after: nil, reason: "cancelled", scope: .device)])
        }
        return result
    }

    /// Resumes the waiting sends among `results` (sends already answered or cancelled are skipped).
    private func resume(_ results: [Int: PushResult]) {
        let continuations = state.withLockedValue { state in
            results.compactMap { id, result in state.waiting.removeValue(forKey: id).map { ($0.continuation, result) } }
        }
        for (continuation, result) in continuations { continuation.resume(returning: result) }
    }

    /// The most pushes one request carries: a quarter of what the relay accepts, so a dispatcher's sends in
    /// flight spread over several requests that the relay works on at once (one request of everything would
    /// leave the pipe empty while it is out).
    static let maxBatch = RelayPushBatch.maxPushes / 4

    /// Takes up to a batch of queued sends that are still waiting.
    private func takeBatch() -> [(Int, RelayPush)] {
        state.withLockedValue { state in
            var batch: [(Int, RelayPush)] = []
            var taken = 0
            for id in state.queued {
                guard batch.count < Self.maxBatch else { break }
                taken += 1
                if let waiting = state.waiting[id] { batch.append((id, waiting.push)) }
            }
            // One removal of the prefix taken (removing the first element one at a time is quadratic).
            state.queued.removeFirst(taken)
            return batch
        }
    }

    public func run() async throws {
        let inFlight = NIOLockedValueBox(0)
        let stopping = NIOLockedValueBox(false)
        await withDiscardingTaskGroup { group in
            await withGracefulShutdownHandler {
                while !Task.isCancelled, !stopping.withLockedValue({ $0 }) {
                    let seen = self.queuedSignal.generation
                    let ended = self.requestEnded.generation
                    if inFlight.withLockedValue({ $0 }) >= self.maxRequests {
                        await self.requestEnded.wait(since: ended, timeout: .seconds(1))
                        continue
                    }
                    let batch = self.takeBatch()
                    if batch.isEmpty {
                        await self.queuedSignal.wait(since: seen, timeout: .seconds(1))
                        continue
                    }
                    inFlight.withLockedValue { $0 += 1 }
                    group.addTask {
                        let results = await self.deliver(batch)
                        self.resume(results)
                        inFlight.withLockedValue { $0 -= 1 }
                        self.requestEnded.signal()
                    }
                }
            } onGracefulShutdown: {
                stopping.withLockedValue { $0 = true }
                self.queuedSignal.signal()
                self.requestEnded.signal()
            }
            // Shutting down: nothing new is accepted; what is queued is answered as a retry.
            let left = self.state.withLockedValue { state -> [Int: PushResult] in
                state.running = false
                return Dictionary(uniqueKeysWithValues: state.queued.map { ($0, .retry(after: nil, reason: "relay client stopped", scope: .device)) })
            }
            self.resume(left)
        }
    }

    /// One `POST /v1/relay/pushes`: per-push results, or the whole batch's result when the request failed.
    private func deliver(_ batch: [(Int, RelayPush)]) async -> [Int: PushResult] {
        let whole: PushResult
        do {
            let answer = try await post("/v1/relay/pushes", RelayPushBatch(pushes: batch.map(\.1)))
            switch answer.status {
            case 200:
                let results = try JSONDecoder().decode(RelayPushResults.self, from: answer.body).results
                guard results.count == batch.count else {
                    throw RelayWireError("the relay answered \(results.count) results for \(batch.count) pushes")
                }
                return Dictionary(uniqueKeysWithValues: zip(batch.map(\.0), results.map(\.pushResult)))
            default:
                whole = Self.result(status: answer.status, retryAfter: answer.retryAfter)
            }
        } catch {
            logger.warning("relay request failed", metadata: ["relay.error": "\(String(describing: type(of: error)))"])
            whole = .retry(after: nil, reason: "relay unreachable or its answer unreadable", scope: .provider)
        }
        return Dictionary(uniqueKeysWithValues: batch.map { ($0.0, whole) })
    }

    /// What a refused request means for each of its pushes: the relay's trouble (5xx, 401/403, 429) is a
    /// platform outage for the dispatcher (retried with backoff, counted by the breaker); a 400 is ours.
    static func result(status: UInt, retryAfter: Duration?) -> PushResult {
        switch status {
        case 429: .retry(after: retryAfter, reason: "relay quota exceeded (429)", scope: .provider)
        case 401, 403: .retry(after: retryAfter, reason: "relay refused this installation (\(status)): check its id and key", scope: .provider)
        case 400, 413: .failed(reason: "relay refused the request (\(status))")
        default: .retry(after: retryAfter, reason: "relay answered \(status)", scope: .provider)
        }
    }

    /// Hands registration changes to the relay; throws when it did not take them.
    public func changeTokens(_ changes: RelayTokenChanges) async throws {
        let answer = try await post("/v1/relay/tokens", changes)
        guard answer.status == 200 else { throw RelayWireError("the relay refused the registrations (\(answer.status))") }
    }

    private func readySigner() async throws -> RelayTokenSigner {
        if let signer = signer.withLockedValue({ $0 }) { return signer }
        let made = try await RelayTokenSigner(installation: installation, key: key)
        signer.withLockedValue { $0 = made }
        return made
    }

    private func post(_ path: String, _ body: some Encodable) async throws -> (status: UInt, body: Data, retryAfter: Duration?) {
        let bytes = try JSONEncoder().encode(body)
        let token = try await readySigner().sign(method: "POST", path: path, body: bytes)
        var request = HTTPClientRequest(url: url + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: bytes))
        let response = try await httpClient.execute(request, timeout: .milliseconds(timeout.wholeMilliseconds))
        let data = Data(buffer: try await response.body.collect(upTo: 4 << 20))
        let retryAfter = RetryAfter.parse(response.headers.first(name: "retry-after"))
        return (response.status.code, data, retryAfter)
    }
}

/// A relayed platform: pushes go through the vendor's relay instead of the platform's API. A push the relay
/// refuses because its token is not registered is retried while the registration waits to be handed over,
/// while that cannot be known (the database unavailable), and once in any case (the handover may have
/// committed while this push was out: the relay checked before, the outbox was read after); refused again
/// with nothing pending, the device is retired (its binding was released).
public struct RelayProvider: PushProvider {
    public let platform: Platform
    let client: RelayClient
    /// Whether this token's registration change still waits to be handed to the relay (throws when unknown).
    let isPending: @Sendable (Platform, String) async throws -> Bool

    /// A provider of `platform` through `client`.
    public init(platform: Platform, client: RelayClient, isPending: @escaping @Sendable (Platform, String) async throws -> Bool) {
        self.platform = platform
        self.client = client
        self.isPending = isPending
    }

    public func send(_ push: Push) async -> PushResult {
        let result = await client.send(push)
        guard case .tokenInvalid(let reason) = result, reason.hasPrefix(RelayOutcome.refusalPrefix) else { return result }
        let pending: Bool?
        do { pending = try await isPending(platform, push.target.token) } catch { pending = nil }
        return Self.refused(result, attempt: push.attempt, pending: pending)
    }

    /// What a refusal of the token becomes at `attempt` (1 for the first), given whether its registration is
    /// still to be handed over (`nil`: unknown).
    static func refused(_ result: PushResult, attempt: Int, pending: Bool?) -> PushResult {
        switch (pending, attempt) {
        case (true, _):
            return .retry(after: .seconds(1), reason: "relay: the token's registration is still being handed over", scope: .device)
        case (nil, _):
            return .retry(
                after: .seconds(1), reason: "relay: refused, and whether the token's registration was handed over is unknown", scope: .device)
        case (false, ...1):
            return .retry(
                after: .seconds(1), reason: "relay: refused at the first attempt; its registration may have been handed over meanwhile",
                scope: .device)
        default:
            return result
        }
    }
}

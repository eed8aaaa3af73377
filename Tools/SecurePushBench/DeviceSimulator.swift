import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SecurePushCore
import Synchronization

/// `securepush-bench devices`: the phones of a broadcast, in a process of their own. It follows the
/// simulated platform's outbox and, for every pushed id, fetches the notification with that device's own
/// credential at once, as an app woken by the push would (`GET /v1/notifications/{id}`), retrying 429
/// and 503 after their `Retry-After`. It prints one line of figures when every expected notification was
/// fetched (or at the deadline).
struct DeviceSimulator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Fetch every pushed id from the read API with its device's credential, as phones would."
    )

    @Option(help: "The read API's base URL.") var api: String
    @Option(help: "A file of lines \"<device id> <device secret>\".") var credentials: String
    @Option(help: "The simulated platform's outbox (JSON lines) to follow.") var outbox: String
    @Option(help: "How many notifications to fetch before finishing.") var expect: Int
    @Option(help: "Fetches in flight at once (the phones fetching at the same moment).") var connections = 64
    @Option(help: "Give up after this many seconds.") var deadline = 900

    func run() async throws {
        let secrets = try Self.loadCredentials(credentials)
        // ops/bench starts the broadcast once the phones are ready.
        FileHandle.standardError.write(Data("devices ready: \(secrets.count) credentials\n".utf8))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let tally = FetchTally()
        let (pushes, sink) = AsyncStream.makeStream(of: OutboxTail.Push.self)
        let expect = self.expect
        let base = api
        let limit = connections
        let outcome = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                // Every push line, handed on as read; the tail stops once `expect` distinct ids were seen.
                var seen = Set<String>()
                try await OutboxTail(path: outbox).follow { push in
                    tally.pushed(at: push.time)
                    if seen.insert(push.notificationID).inserted { sink.yield(push) }
                    return seen.count < expect
                }
                sink.finish()
                return true
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { fetches in
                    var inFlight = 0
                    for await push in pushes {
                        if inFlight >= limit {
                            await fetches.next()
                            inFlight -= 1
                        }
                        guard let secret = secrets[push.deviceID] else {
                            tally.answered(status: nil, seconds: 0, failure: "unknown device")
                            continue
                        }
                        inFlight += 1
                        fetches.addTask {
                            await Self.fetch(http: http, base: base, push: push, credential: "\(push.deviceID).\(secret)", tally: tally)
                        }
                    }
                }
                return true
            }
            group.addTask {
                try await Task.sleep(for: .seconds(deadline))
                return false
            }
            let finished = try await group.next() ?? false
            if finished {
                // The tail ended; wait for the fetches, not for the deadline.
                _ = try await group.next()
            }
            group.cancelAll()
            return finished
        }
        try await http.shutdown()
        print(tally.line(expected: expect, completed: outcome))
    }

    /// One phone's fetch: retried after `Retry-After` on 429 and 503, after 1 s on a transport error.
    static func fetch(http: HTTPClient, base: String, push: OutboxTail.Push, credential: String, tally: FetchTally) async {
        var request = HTTPClientRequest(url: "\(base)/v1/notifications/\(push.notificationID)")
        request.headers.add(name: "authorization", value: "Bearer \(credential)")
        for _ in 0..<20 {
            let start = ContinuousClock.now
            do {
                let response = try await http.execute(request, timeout: .seconds(60))
                _ = try await response.body.collect(upTo: 1 << 20)
                let status = Int(response.status.code)
                tally.answered(status: status, seconds: (ContinuousClock.now - start).secondsDouble, failure: nil)
                guard status == 429 || status == 503 else {
                    if status == 200 { tally.fetched() }
                    return
                }
                let wait = response.headers.first(name: "retry-after").flatMap(Double.init) ?? 1
                try await Task.sleep(for: .milliseconds(Int64(max(wait, 0.05) * 1000)))
            } catch is CancellationError {
                return
            } catch {
                tally.answered(status: nil, seconds: (ContinuousClock.now - start).secondsDouble, failure: "\(error)")
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    static func loadCredentials(_ path: String) throws -> [String: String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var secrets: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 2 { secrets[String(words[0]).lowercased()] = String(words[1]) }
        }
        guard !secrets.isEmpty else { throw ValidationError("no credentials in \(path)") }
        return secrets
    }
}

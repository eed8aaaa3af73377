import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore
import ServiceLifecycle

/// Posts the outcome events to the operator's webhook (`WebhookSettings`), batch after batch in the feed's
/// order, one dispatcher at a time (`WebhookFeed`): at least once (a batch is sent again, with the same
/// `webhook-id`, until the receiver answers 2xx), in order per notification, and apart from the drain (its own
/// HTTP client and database statements). A receiver that is down keeps the cursor where it was: the events
/// wait in the table for the retention, and the retries back off to `retryMax`.
public struct WebhookService: Service {
    let store: any WebhookFeed
    let settings: WebhookSettings
    let logger: Logger

    /// How often an idle webhook looks for new events.
    static let poll = Duration.seconds(1)

    /// Posts `store`'s events as `settings` say.
    public init(store: any WebhookFeed, settings: WebhookSettings, logger: Logger) {
        self.store = store
        self.settings = settings
        self.logger = logger
    }

    public func run() async throws {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: .seconds(5))
        configuration.tracing.tracer = nil  // no trace headers to the receiver
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        await cancelWhenGracefulShutdown { await self.loop(client) }
        try await client.shutdown()
    }

    private func loop(_ client: HTTPClient) async {
        var failures = 0
        while !Task.isCancelled {
            do {
                let sent = try await store.deliverNext(limit: settings.batch) { events in try await post(events, client) }
                if failures > 0 {
                    logger.notice(
                        "the outcome webhook takes events again", metadata: ["webhook.host": "\(settings.host)", "webhook.failures": "\(failures)"])
                    failures = 0
                }
                if sent < settings.batch { try await Task.sleep(for: Self.poll) }
            } catch is CancellationError {
                return
            } catch {
                failures += 1
                let reason = (error as? WebhookRefused)?.description ?? String(describing: type(of: error))
                try? await store.recordFailure(reason)
                if failures == 1 {
                    logger.warning(
                        "the outcome webhook refused or missed a batch; it is sent again until it is taken",
                        metadata: ["webhook.host": "\(settings.host)", "webhook.error": "\(reason)"])
                }
                try? await Task.sleep(for: delay(after: failures))
            }
        }
    }

    /// 1 s, 2 s, 4 s, ... up to `retryMax`, each shortened by up to a fifth so that restarts spread out.
    func delay(after failures: Int) -> Duration {
        let seconds = min(Double(1 << min(failures - 1, 20)), Double(settings.retryMax.components.seconds))
        return .milliseconds(Int64(seconds * 1000 * Double.random(in: 0.8...1)))
    }

    private func post(_ events: [OutcomeEvent], _ client: HTTPClient) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Array(try encoder.encode(WebhookBody(events: events)))
        let id = "securepush-" + (events.last?.cursor ?? "").replacingOccurrences(of: ":", with: "-")
        let timestamp = Int64(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: settings.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "securepush/\(SecurePushVersion.current)")
        request.headers.add(name: "webhook-id", value: id)
        request.headers.add(name: "webhook-timestamp", value: "\(timestamp)")
        request.headers.add(name: "webhook-signature", value: settings.signature.sign(id: id, timestamp: timestamp, body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .init(settings.timeout))
        _ = try? await response.body.collect(upTo: 1 << 16)
        guard (200..<300).contains(response.status.code) else { throw WebhookRefused(status: response.status.code) }
    }
}

/// The webhook's body: `{"events": [...]}`, each event with the columns of `securepush.events_after`.
struct WebhookBody: Encodable {
    var events: [OutcomeEvent]
}

/// The receiver answered a status other than 2xx.
struct WebhookRefused: Error, CustomStringConvertible {
    var status: UInt
    var description: String { "HTTP \(status)" }
}

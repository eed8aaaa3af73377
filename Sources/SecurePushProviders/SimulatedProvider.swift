import Foundation
import SecurePushCore

/// The `simulated` platform: builds the exact request an APNs push would be and records it
/// instead of sending it. Tests may script its answers with `behavior`.
public struct SimulatedProvider: PushProvider {
    /// Decides the outcome of a push (default: sent).
    public typealias Behavior = @Sendable (Push) async -> PushResult

    public let platform: Platform = .simulated
    let outbox: SimulatedOutbox
    let factory: APNsRequestFactory
    let behavior: Behavior?
    let latency: Duration?

    /// Creates a simulated provider writing to `outbox`; `latency` stands in for a network round trip.
    public init(
        outbox: SimulatedOutbox,
        factory: APNsRequestFactory = APNsRequestFactory(defaultTopic: "com.example.securepush"),
        latency: Duration? = nil,
        behavior: Behavior? = nil
    ) {
        self.outbox = outbox
        self.factory = factory
        self.latency = latency
        self.behavior = behavior
    }

    public func send(_ push: Push) async -> PushResult {
        if let latency {
            do {
                try await Task.sleep(for: latency)
            } catch {
                return .retry(after: nil, reason: "cancelled before sending", scope: .device)
            }
        }
        let result = await behavior?(push) ?? .sent(messageID: UUID().uuidString.lowercased())
        guard case .sent = result, outbox.isRecording else { return result }
        let request = factory.makeRequest(for: push)
        outbox.record(
            SimulatedPush(
                platform: platform.rawValue,
                deviceID: push.target.deviceID.uuidString.lowercased(),
                token: push.target.token,
                notificationID: push.notificationID.description,
                method: request.method,
                path: request.path,
                headers: request.headers,
                body: String(decoding: request.body, as: UTF8.self),
                time: Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())
            )
        )
        return result
    }
}

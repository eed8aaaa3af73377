import Foundation
import SecurePushCore

/// The `simulated` platform: builds the exact request a push would be (by default the APNs envelope,
/// docs/envelopes.md) and records it instead of sending it. A token that starts with `invalid-` is refused as
/// APNs refuses an unregistered device (`tokenInvalid`, so the device is retired), to rehearse a dead token
/// locally. Tests may script its answers with `behavior`.
public struct SimulatedProvider: PushProvider {
    /// Decides the outcome of a push (default: sent).
    public typealias Behavior = @Sendable (Push) async -> PushResult

    public let platform: Platform = .simulated
    let outbox: SimulatedOutbox
    let profile: any EnvelopeProfile
    let behavior: Behavior?
    let latency: Duration?

    /// The bundle id the simulated APNs requests name.
    public static let topic = "com.example.securepush"
    /// The token prefix the simulated platform refuses as invalid.
    public static let invalidTokenPrefix = "invalid-"
    /// The Firebase project the simulated FCM requests name (`SECUREPUSH_SIMULATED_ENVELOPE=fcm`).
    public static let project = "securepush-simulated"

    /// Creates a simulated provider writing to `outbox` the requests `profile` builds; `latency` stands in
    /// for a network round trip.
    public init(
        outbox: SimulatedOutbox,
        profile: any EnvelopeProfile = APNsEnvelope(defaultTopic: Self.topic),
        latency: Duration? = nil,
        behavior: Behavior? = nil
    ) {
        self.outbox = outbox
        self.profile = profile
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
        let result =
            if let behavior {
                await behavior(push)
            } else if push.target.token.hasPrefix(Self.invalidTokenPrefix) {
                PushResult.tokenInvalid(reason: "Unregistered (a simulated token starting with \(Self.invalidTokenPrefix))")
            } else {
                PushResult.sent(messageID: UUID.random().uuidString.lowercased())
            }
        guard case .sent = result, outbox.isRecording else { return result }
        let request = profile.request(for: push)
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
                time: APITimestamp.string(Date())
            )
        )
        return result
    }
}

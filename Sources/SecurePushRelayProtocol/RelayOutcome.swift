import Foundation
import SecurePushCore

/// What became of one relayed push, in the order of the request's pushes.
public struct RelayOutcome: Codable, Sendable, Hashable {
    /// The outcome's word.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// The platform accepted it (`message_id`, when the platform gives one).
        case sent
        /// The platform says the token is dead: the self-hosted server retires the device.
        case tokenInvalid = "token_invalid"
        /// Try again (after `retry_after` seconds when given); `scope` says whose trouble it is.
        case retry
        /// A permanent failure the platform reported (`reason`).
        case failed
        /// The relay refused it: the token is not registered by this installation (the same answer for a
        /// token registered elsewhere as for an unknown one), or the push breaks the wire format (`reason`).
        case refused
    }

    public var outcome: Kind
    public var messageID: String?
    public var retryAfter: Double?
    /// `provider` (the platform or the relay is failing: counts against the self-hosted breaker) or `device`.
    public var scope: String?
    public var reason: String?

    enum CodingKeys: String, CodingKey {
        case outcome
        case messageID = "message_id"
        case retryAfter = "retry_after"
        case scope
        case reason
    }

    /// Creates an outcome.
    public init(outcome: Kind, messageID: String? = nil, retryAfter: Double? = nil, scope: String? = nil, reason: String? = nil) {
        self.outcome = outcome
        self.messageID = messageID
        self.retryAfter = retryAfter
        self.scope = scope
        self.reason = reason
    }

    /// The outcome of a platform's answer.
    public init(_ result: PushResult) {
        switch result {
        case .sent(let messageID):
            self.init(outcome: .sent, messageID: messageID)
        case .retry(let after, let reason, let scope):
            self.init(
                outcome: .retry, retryAfter: after.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 },
                scope: scope.rawValue, reason: reason)
        case .tokenInvalid(let reason):
            self.init(outcome: .tokenInvalid, reason: reason)
        case .failed(let reason):
            self.init(outcome: .failed, reason: reason)
        }
    }

    /// The refusal of a token this installation did not register (unknown, or registered by others only).
    public static let unregistered = RelayOutcome(outcome: .refused, reason: "the token is not registered by this installation")

    /// The refusal of a push of urgency `critical` from an installation whose policy does not allow it.
    public static let criticalRefused = RelayOutcome(
        outcome: .refused, reason: "urgency critical is not allowed for this installation (relay installation set-policy --critical on)")

    /// The refusal of a push for a platform this relay does not push to.
    public static func notRelayed(_ platform: String) -> RelayOutcome {
        RelayOutcome(outcome: .refused, reason: notRelayedPrefix + platform)
    }

    private static let notRelayedPrefix = "this relay does not push to "

    /// How the reason of a refusal's `pushResult` starts (the self-hosted side recognises a refused token by it).
    public static let refusalPrefix = "relay refused: "

    /// Whether a refusal concerns this push alone (its urgency, its platform), not the device's token: the
    /// self-hosted side fails the push and keeps the device.
    var refusesThePushOnly: Bool {
        guard outcome == .refused, let reason else { return false }
        return reason == Self.criticalRefused.reason || reason.hasPrefix(Self.notRelayedPrefix)
    }

    /// What the self-hosted side does with it: a platform's answer as if it had pushed directly. A refused
    /// push is the device's permanent failure (`unregistered`: this installation's binding of the token was
    /// released or never handed over; the device is retired as a dead token would be), unless the refusal is
    /// of the push alone (`criticalRefused`, `notRelayed`): that push failed, the device stays.
    public var pushResult: PushResult {
        switch outcome {
        case .sent:
            return .sent(messageID: messageID)
        case .tokenInvalid:
            return .tokenInvalid(reason: "relay: " + (reason ?? "token invalid"))
        case .retry:
            let after = retryAfter.flatMap { $0.isFinite && $0 >= 0 ? Duration.milliseconds(Int64(min($0, 86_400) * 1000)) : nil }
            return .retry(after: after, reason: "relay: " + (reason ?? "retry"), scope: scope == "provider" ? .provider : .device)
        case .failed:
            return .failed(reason: "relay: " + (reason ?? "failed"))
        case .refused where refusesThePushOnly:
            return .failed(reason: Self.refusalPrefix + (reason ?? "refused"))
        case .refused:
            return .tokenInvalid(reason: Self.refusalPrefix + (reason ?? "refused"))
        }
    }
}

/// `POST /v1/relay/pushes`: a batch of pushes.
public struct RelayPushBatch: Codable, Sendable {
    public var pushes: [RelayPush]

    /// Creates a batch.
    public init(pushes: [RelayPush]) { self.pushes = pushes }

    /// The most pushes one request may carry.
    public static let maxPushes = 500
}

/// The answer to a `RelayPushBatch`: one outcome per push, in order.
public struct RelayPushResults: Codable, Sendable {
    public var results: [RelayOutcome]

    /// Creates the answer.
    public init(results: [RelayOutcome]) { self.results = results }
}

/// A token as registered with the relay.
public struct RelayToken: Codable, Sendable, Hashable {
    /// `apns`, `fcm` or `wns`.
    public var platform: String
    /// The push token.
    public var token: String

    /// Creates a token.
    public init(platform: String, token: String) {
        self.platform = platform
        self.token = token
    }
}

/// `POST /v1/relay/tokens`: tokens to bind to the calling installation and tokens to release.
public struct RelayTokenChanges: Codable, Sendable {
    public var bind: [RelayToken]
    public var release: [RelayToken]

    /// Creates a change.
    public init(bind: [RelayToken] = [], release: [RelayToken] = []) {
        self.bind = bind
        self.release = release
    }

    /// The most tokens one request may bind, and the most it may release.
    public static let maxTokens = 1000
}

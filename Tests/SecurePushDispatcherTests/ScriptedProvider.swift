import NIOConcurrencyHelpers
import SecurePushCore

/// A provider whose answers a test scripts; it counts the sends started and those in flight.
final class ScriptedProvider: PushProvider {
    let platform: Platform
    private let script: @Sendable (Push) async -> PushResult
    private let counts = NIOLockedValueBox<(started: Int, inFlight: Int, maxInFlight: Int)>((0, 0, 0))
    private let perNotification = NIOLockedValueBox<[NotificationID: Int]>([:])

    init(platform: Platform = .simulated, script: @escaping @Sendable (Push) async -> PushResult = { _ in .sent(messageID: nil) }) {
        self.platform = platform
        self.script = script
    }

    var started: Int { counts.withLockedValue { $0.started } }
    var inFlight: Int { counts.withLockedValue { $0.inFlight } }
    var maxInFlight: Int { counts.withLockedValue { $0.maxInFlight } }
    /// How many sends started for one notification.
    func sends(of notificationID: NotificationID) -> Int { perNotification.withLockedValue { $0[notificationID] ?? 0 } }

    func send(_ push: Push) async -> PushResult {
        counts.withLockedValue {
            $0.started += 1
            $0.inFlight += 1
            $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
        }
        perNotification.withLockedValue { $0[push.notificationID, default: 0] += 1 }
        defer { counts.withLockedValue { $0.inFlight -= 1 } }
        return await script(push)
    }

    /// A send that never answers until it is cancelled (a stalled provider); then it answers `.retry`.
    static func stalled() -> ScriptedProvider {
        ScriptedProvider { _ in
            // Ends only when cancelled: a stalled request, not a timer standing in for a condition.
            try? await Task.sleep(for: .seconds(3600))
            return .retry(after: nil, reason: "cancelled at the shutdown deadline")
        }
    }
}

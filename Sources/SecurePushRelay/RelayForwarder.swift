import Foundation
import Logging
import Metrics
import SecurePushCore
import SecurePushRelayProtocol

/// Sends an installation's pushes through the vendor's providers (APNs, FCM, WNS) and answers one outcome
/// per push. It keeps nothing: each push is forwarded and forgotten.
public final class RelayForwarder: Sendable {
    let providers: [Platform: any PushProvider]
    let limiter: InstallationLimiter
    let outcomes: [RelayOutcome.Kind: Counter]
    let logger: Logger

    /// A forwarder over `providers` (by the platform they push for), with at most `perInstallation` sends in
    /// flight per installation.
    public init(providers: [Platform: any PushProvider], perInstallation: Int, logger: Logger) {
        self.providers = providers.filter { RelayPush.relayedPlatforms.contains($0.key) }
        self.limiter = InstallationLimiter(perInstallation: perInstallation)
        self.logger = logger
        self.outcomes = Dictionary(
            uniqueKeysWithValues: [RelayOutcome.Kind.sent, .tokenInvalid, .retry, .failed, .refused].map {
                ($0, Counter(label: "securepush_relay_pushes_total", dimensions: [("outcome", $0.rawValue)]))
            })
    }

    /// The platforms this relay pushes to.
    public var platforms: Set<Platform> { Set(providers.keys) }

    /// Sends `pushes` (index in the request, push) for `installation`; returns each one's outcome by index.
    func send(_ pushes: [(Int, Push)], installation: UUID) async -> [Int: RelayOutcome] {
        // One push (a quiet moment's request) goes out from the request's own task: no child task to wait for.
        if pushes.count == 1, let (index, push) = pushes.first, let provider = providers[push.target.platform] {
            await limiter.acquire(installation)
            return [index: await sent(push, through: provider, installation: installation)]
        }
        return await withTaskGroup(of: (Int, RelayOutcome).self) { group in
            for (index, push) in pushes {
                guard let provider = providers[push.target.platform] else {
                    group.addTask { (index, .notRelayed(push.target.platform.rawValue)) }
                    continue
                }
                await limiter.acquire(installation)
                group.addTask { (index, await self.sent(push, through: provider, installation: installation)) }
            }
            var outcomes: [Int: RelayOutcome] = [:]
            for await (index, outcome) in group {
                outcomes[index] = outcome
            }
            return outcomes
        }
    }

    /// Sends `push` in the slot already acquired for `installation`, and frees the slot.
    private func sent(_ push: Push, through provider: any PushProvider, installation: UUID) async -> RelayOutcome {
        let result = await provider.send(push)
        limiter.release(installation)
        return RelayOutcome(result)
    }

    /// Counts answered outcomes in `securepush_relay_pushes_total{outcome}`.
    func count(_ outcomes: [RelayOutcome]) {
        for outcome in outcomes { self.outcomes[outcome.outcome]?.increment() }
    }
}

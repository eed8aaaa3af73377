import SecurePushCore

/// The push addresses this process has just been told are dead (`tokenInvalid`), so that its lanes send no
/// more to them before the outcome that retires the device is written (outcomes are written after the lane
/// has claimed on; a device's later deliveries in batches already claimed were pushed to the dead address).
/// A delivery to a remembered (device, token) is settled as cancelled, as one to a retired device is. Keyed by
/// the token too: a device that registers a new address is pushed again. At most `limit` entries, the oldest
/// forgotten first (the database's retirement is what lasts).
final class DeadTokens: Sendable {
    private let addresses: RecentAddresses<Bool>

    init(limit: Int = 10_000) {
        addresses = RecentAddresses(limit: limit)
    }

    /// Remembers the target of a push the platform called dead.
    func insert(_ target: PushTarget) {
        addresses.update(target) { $0 = true }
    }

    /// Whether the platform called this target dead.
    func contains(_ target: PushTarget) -> Bool {
        addresses.value(for: target) ?? false
    }
}

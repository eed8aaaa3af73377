import Crypto
import Foundation
import SecurePushCore
import SecurePushPostgres
import SecurePushReports
import Synchronization

@testable import SecurePushAPI
@testable import SecurePushStore

/// The API's stores without a database, for tests of HTTP behaviour (status codes, headers, validation
/// before any store call, deadlines): devices and notifications in memory, every call counted, and an
/// optional delay that outlasts the request's database deadline. SQL behaviour is tested against
/// PostgreSQL in SecurePushIntegrationTests, never here.
final class MemoryStores: DeviceRepository, NotificationRepository, PreferenceRepository, StatusRepository, SecurityRepository,
    SupportRepository
{
    struct State {
        var devices: [UUID: (secretHash: [UInt8], userID: String)] = [:]
        var notifications: [UUID: (userID: String, payload: String)] = [:]
        var quietHours: [String: QuietHours] = [:]
        var blockedFor: Double = 0
        var failures: [[String]] = []
        var audits: [AuditEvent] = []
        var calls: [String] = []
        var delay: Duration?
        var role: ServerRole = .primary
    }

    let state = Mutex(State())

    /// The stores as the API's context holds them.
    var stores: APIStores {
        var stores = APIStores(
            devices: self, notifications: self, preferences: self, status: self, security: self, pendingMigrations: { [] },
            readiness: { [self] in ([], state.withLock { $0.role }) })
        stores.support = self
        return stores
    }

    /// Adds a device of `userID`; returns its credential as a bearer token (`<id>.<secret>`).
    func addDevice(userID: String) -> (id: UUID, bearer: String) {
        let id = UUID()
        let secret = [UInt8](repeating: 7, count: 32)
        state.withLock { $0.devices[id] = ([UInt8](SHA256.hash(data: secret)), userID) }
        return (id, "\(id.uuidString.lowercased()).\(Data(secret).base64URLEncodedString)")
    }

    func addNotification(userID: String, payload: String) -> UUID {
        let id = UUID()
        state.withLock { $0.notifications[id] = (userID, payload) }
        return id
    }

    /// Counts the call, then waits out the configured delay (if any).
    private func enter(_ name: String) async throws {
        let delay = state.withLock {
            $0.calls.append(name)
            return $0.delay
        }
        if let delay { try await Task.sleep(for: delay) }
    }

    private func session(_ proof: DeviceProof) -> AuthenticatedDevice? {
        state.withLock { state in
            guard state.blockedFor == 0, let device = state.devices[proof.deviceID], device.secretHash == proof.secretHash else { return nil }
            return AuthenticatedDevice(deviceID: proof.deviceID, userID: device.userID)
        }
    }

    private var blocked: Double { state.withLock { $0.blockedFor } }

    // DeviceRepository

    func register(userID: String, platform: String, token: String, optionsJSON: String, sealingKey: SealingPublicKey?) async throws
        -> DeviceRegistration
    {
        try await enter("register")
        return DeviceRegistration(deviceID: UUID(), deviceSecret: "secret")
    }

    func authenticate(_ proof: DeviceProof) async throws -> DeviceAccess<Void> {
        try await enter("authenticate")
        guard let device = session(proof) else { return .refused(blockedFor: blocked) }
        return .granted(device, ())
    }

    func rotate(deviceID: UUID, sealingKey: SealingPublicKey?) async throws -> DeviceRegistration? {
        try await enter("rotate")
        return nil
    }

    func setSealingKey(deviceID: UUID, _ sealingKey: SealingPublicKey?) async throws -> Bool {
        try await enter("setSealingKey")
        return false
    }

    func platform(deviceID: UUID) async throws -> String? {
        try await enter("platform")
        return "simulated"
    }

    func updateToken(deviceID: UUID, token: String, optionsJSON: String?) async throws -> TokenUpdate? {
        try await enter("updateToken")
        return nil
    }

    func deactivate(deviceID: UUID, reason: String) async throws {
        try await enter("deactivate")
    }

    // NotificationRepository

    func fetch(ids: [UUID], as proof: DeviceProof) async throws -> DeviceAccess<[FetchedNotification]> {
        try await enter("fetch")
        guard let device = session(proof) else { return .refused(blockedFor: blocked) }
        let found = state.withLock { state in
            ids.map { id -> FetchedNotification in
                guard let stored = state.notifications[id], stored.userID == device.userID else {
                    return FetchedNotification(id: id, result: .notFound)
                }
                return FetchedNotification(
                    id: id,
                    result: .found(
                        StoredNotification(id: id, payloadJSON: stored.payload, createdAt: Date(), readAt: Date(), category: nil, previewJSON: nil)))
            }
        }
        return .granted(device, found)
    }

    func list(as proof: DeviceProof, unreadOnly: Bool, limit: Int, after cursor: ListCursor?, payloads: Bool) async throws
        -> DeviceAccess<[NotificationSummary]>
    {
        try await enter("list")
        guard let device = session(proof) else { return .refused(blockedFor: blocked) }
        return .granted(device, [])
    }

    // PreferenceRepository

    func quietHours(userID: String) async throws -> QuietHours? {
        try await enter("quietHours")
        return state.withLock { $0.quietHours[userID] }
    }

    func setQuietHours(userID: String, _ hours: QuietHours) async throws {
        try await enter("setQuietHours")
        state.withLock { $0.quietHours[userID] = hours }
    }

    func clearQuietHours(userID: String) async throws -> Bool {
        try await enter("clearQuietHours")
        return state.withLock { $0.quietHours.removeValue(forKey: userID) != nil }
    }

    func categories(userID: String) async throws -> [CategoryState] {
        try await enter("categories")
        return []
    }

    func setMuted(userID: String, category: String, muted: Bool) async throws -> Int {
        try await enter("setMuted")
        return 0
    }

    // StatusRepository

    func report(pendingMigrations: [String]) async throws -> StatusReport {
        try await enter("report")
        throw CancellationError()
    }

    func fetchStats(window: Duration) async throws -> [StatusReport.PlatformFetch] {
        try await enter("fetchStats")
        return []
    }

    // SecurityRepository

    func blockedFor(_ keys: [String]) async throws -> Double {
        try await enter("blockedFor")
        return blocked
    }

    func recordFailure(_ keys: [String], policy: AuthThrottlePolicy) async throws -> Double {
        try await enter("recordFailure")
        return state.withLock {
            $0.failures.append(keys)
            return $0.blockedFor
        }
    }

    func audit(_ event: AuditEvent, userID: String?, deviceID: UUID?, reason: String?) async throws {
        try await enter("audit")
        state.withLock { $0.audits.append(event) }
    }

    // SupportRepository

    func notification(_ id: UUID) async throws -> NotificationTimeline {
        try await enter("supportNotification")
        return NotificationTimeline(notificationID: id)
    }

    func device(_ id: UUID) async throws -> DeviceTimeline {
        try await enter("supportDevice")
        return DeviceTimeline(deviceID: id)
    }
}

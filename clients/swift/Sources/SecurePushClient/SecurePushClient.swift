import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The device side of SecurePush: turns an id-only push into content, with the device's own credential.
///
/// Depends on Foundation only (and CryptoKit, swift-crypto on Linux, to open sealed previews), so a
/// Notification Service Extension can use it within its memory and time budget. Every call runs under an
/// overall deadline (default 25 s, inside an extension's ~30 s) with a timeout per request (default 8 s),
/// and retries only what retrying can fix.
///
/// ```swift
/// let client = SecurePushClient(baseURL: URL(string: "https://push.example.com")!,
///                               credentials: KeychainCredentialStore(accessGroup: "TEAMID.group.com.example.app"))
/// let message = PushMessage(apnsUserInfo: request.content.userInfo)
/// if let message, let preview = try? client.openSealed(message), let title = preview.title {
///     content.title = title  // a sealed preview: shown at once, even without the network
///     content.body = preview.body ?? content.body
/// } else if let id = message?.notificationID, case .found(let notification) = await client.fetch(id) {
///     content.title = notification.payload["title"]?.stringValue ?? content.title
/// }
/// ```
public struct SecurePushClient: Sendable {
    /// Deadlines and retries.
    public struct Configuration: Sendable, Hashable {
        /// The most one call may take, retries included.
        public var deadline: Duration = .seconds(25)
        /// The most one HTTP request may take.
        public var requestTimeout: Duration = .seconds(8)
        /// Attempts per call (network errors, timeouts, 408, 429 and 5xx are retried).
        public var maxAttempts = 4

        /// The defaults.
        public init() {}
    }

    /// The SecurePush API's base URL (`https://push.example.com/`).
    public let baseURL: URL
    /// Where the device credential is kept.
    public let credentials: any CredentialStore
    /// Deadlines and retries.
    public let configuration: Configuration
    private let requester: RetryingRequester

    /// Creates a client. Pass a dedicated `URLSession` to control caching or proxies.
    public init(baseURL: URL, credentials: any CredentialStore, configuration: Configuration = Configuration(), session: URLSession = .shared) {
        self.baseURL = baseURL
        self.credentials = credentials
        self.configuration = configuration
        self.requester = RetryingRequester(session: session, configuration: configuration)
    }

    // MARK: Reading

    /// Fetches one notification's content (the server marks it read). Never throws: the result says
    /// what happened, and only `.unavailable` is worth retrying later.
    public func fetch(_ id: UUID) async -> FetchResult {
        guard let credential = try? credentials.load() else { return .unauthorized }
        switch await requester.send(request("v1/notifications/\(id.uuidString.lowercased())", bearer: credential.bearer)) {
        case .failure(let problem):
            return .unavailable(reason: problem.reason)
        case .success(let answer):
            switch answer.status {
            case 200:
                guard let notification = try? Self.decoder.decode(FetchedNotification.self, from: answer.body) else {
                    return .unavailable(reason: "the server's answer is not a notification")
                }
                return .found(notification)
            case 404: return .notFound
            case 410: return .gone
            case 401, 403: return .unauthorized
            default: return .unavailable(reason: "HTTP \(answer.status)")
            }
        }
    }

    /// Fetches up to 50 notifications in one round trip (`POST /v1/notifications/fetch`); ids without
    /// content come back in `missing` with their reason, never as an error for the whole call.
    public func fetch(_ ids: [UUID]) async throws(SecurePushClientError) -> BatchFetchResult {
        struct Body: Encodable { var ids: [String] }
        struct Missing: Decodable {
            var id: UUID
            var reason: MissingReason
        }
        struct Answer: Decodable {
            var notifications: [FetchedNotification]
            var missing: [Missing]
        }
        let body = try encode(Body(ids: ids.map { $0.uuidString.lowercased() }))
        let answer: Answer = try await call("v1/notifications/fetch", method: "POST", body: body, bearer: try credential().bearer)
        return BatchFetchResult(
            found: answer.notifications, missing: Dictionary(answer.missing.map { ($0.id, $0.reason) }, uniquingKeysWith: { first, _ in first }))
    }

    /// Unread notifications with their content, oldest first, each marked read: what an app shows when
    /// it starts or comes to the foreground (`GET /v1/notifications?unread=true&include=payload`).
    public func catchUp(limit: Int = 50) async throws(SecurePushClientError) -> [FetchedNotification] {
        struct Page: Decodable { var notifications: [FetchedNotification] }
        let page: Page = try await call(
            "v1/notifications?unread=true&include=payload&limit=\(max(1, min(limit, 100)))", bearer: try credential().bearer)
        return page.notifications
    }

    // MARK: The device's lifecycle

    /// Registers this device for the user of `userToken` and stores the new credential. Except for Web Push
    /// (whose subscription has its own keys), a new `SealingKey` is sent as `sealing_key` and stored with the
    /// credential, so the server can seal previews to it (a registration that carries its own `sealing_key`
    /// is sent as it is).
    @discardableResult
    public func register(_ registration: DeviceRegistration, userToken: String) async throws(SecurePushClientError) -> DeviceCredential {
        var registration = registration
        var sealingKey: SealingKey?
        if registration.fields["platform"] != .string("webpush"), registration.fields["sealing_key"] == nil {
            let key = SealingKey.generate()
            registration.fields["sealing_key"] = key.json
            sealingKey = key
        }
        let created: CreatedDevice = try await call("v1/devices", method: "POST", body: try encode(registration), bearer: userToken)
        return try store(DeviceCredential(deviceID: created.deviceId, secret: created.deviceSecret, sealingKey: sealingKey))
    }

    /// Replaces the device's secret (the old one stops working at once) and stores the new one. The sealing
    /// key rotates with it: a device that has one sends a fresh one and stores it; one without (Web Push, or
    /// registered before sealed previews) stays without (`setSealingKey()` gives it one).
    @discardableResult
    public func rotate() async throws(SecurePushClientError) -> DeviceCredential {
        let current = try credential()
        let sealingKey = current.sealingKey.map { _ in SealingKey.generate() }
        let body = try sealingKey.map { key throws(SecurePushClientError) in try encode(JSONValue.object(["sealing_key": key.json])) }
        let created: CreatedDevice = try await call("v1/devices/current/rotate", method: "POST", body: body, bearer: current.bearer)
        // `"sealing": false`: the server did not take the key, so it seals nothing to it.
        let kept = created.sealing == false ? nil : sealingKey
        return try store(DeviceCredential(deviceID: created.deviceId, secret: created.deviceSecret, sealingKey: kept))
    }

    /// Gives the device a new sealing key (`PUT /v1/devices/current/sealing-key`) and stores it with the
    /// credential: for a device registered before sealed previews, or to replace the key. Not for Web Push.
    @discardableResult
    public func setSealingKey() async throws(SecurePushClientError) -> SealingKey {
        var current = try credential()
        let key = SealingKey.generate()
        let _: Empty = try await call("v1/devices/current/sealing-key", method: "PUT", body: try encode(key.json), bearer: current.bearer)
        current.sealingKey = key
        try store(current)
        return key
    }

    /// Removes the device's sealing key (`DELETE /v1/devices/current/sealing-key`): its pushes are id-only again.
    public func clearSealingKey() async throws(SecurePushClientError) {
        var current = try credential()
        let _: Empty = try await call("v1/devices/current/sealing-key", method: "DELETE", bearer: current.bearer)
        current.sealingKey = nil
        try store(current)
    }

    /// Opens a `.sealed` push with the stored sealing key, without the network. Throws for any other
    /// message, without a stored key, or when the record does not open: then fetch by id as usual.
    public func openSealed(_ message: PushMessage) throws(SealedPushError) -> SealedPreview {
        guard case .sealed(_, let sealed) = message else { throw .notSealed }
        guard let key = (try? credentials.load())?.sealingKey else { throw .noSealingKey }
        return try sealed.open(with: key)
    }

    /// Replaces this device's push address with the credential alone, no user token: call it wherever the
    /// platform hands the app a new token (APNs `didRegisterForRemoteNotificationsWithDeviceToken` after a
    /// restore, FCM `onNewToken`, a new Web Push subscription). Build `address` as for `register`; its
    /// platform must be the device's. The device keeps its id and secret; pushes still waiting go to the
    /// new address.
    public func updatePushToken(_ address: DeviceRegistration) async throws(SecurePushClientError) {
        let _: Empty = try await call("v1/devices/current/token", method: "PUT", body: try encode(address), bearer: try credential().bearer)
    }

    // MARK: What the user chooses (shared by all their devices)

    /// The user's quiet hours, if set.
    public func quietHours() async throws(SecurePushClientError) -> QuietHours? {
        let body: QuietHours.Body = try await call("v1/quiet-hours", bearer: try credential().bearer)
        return body.quietHours
    }

    /// Sets the user's quiet hours: pushes that would arrive inside the window wait for its end (time-sensitive
    /// ones do not).
    public func setQuietHours(_ hours: QuietHours) async throws(SecurePushClientError) {
        let _: QuietHours.Body = try await call("v1/quiet-hours", method: "PUT", body: try encode(hours), bearer: try credential().bearer)
    }

    /// Removes the user's quiet hours.
    public func clearQuietHours() async throws(SecurePushClientError) {
        let _: Empty = try await call("v1/quiet-hours", method: "DELETE", bearer: try credential().bearer)
    }

    /// The user's categories (of their notifications, and muted ones) and whether each is muted.
    public func categories() async throws(SecurePushClientError) -> [NotificationCategory] {
        let body: NotificationCategory.List = try await call("v1/categories", bearer: try credential().bearer)
        return body.categories
    }

    /// Mutes or unmutes a category for the user: a muted one is stored and listed, never pushed.
    public func setCategory(_ name: String, muted: Bool) async throws(SecurePushClientError) {
        guard let escaped = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) else {
            throw .rejected(status: 0, code: "invalid_parameter", message: "the category name cannot be put in a URL")
        }
        let _: NotificationCategory = try await call(
            "v1/categories/\(escaped)", method: "PUT", body: try encode(["muted": muted]), bearer: try credential().bearer)
    }

    /// Unregisters the device (the server stops pushing to it) and deletes the stored credential.
    public func unregister() async throws(SecurePushClientError) {
        let _: Empty = try await call("v1/devices/current", method: "DELETE", bearer: try credential().bearer)
        try? credentials.delete()
    }

    // MARK: Plumbing

    struct CreatedDevice: Decodable {
        var deviceId: UUID
        var deviceSecret: String
        /// Whether the device has a sealing key now (rotation's answer).
        var sealing: Bool?

        enum CodingKeys: String, CodingKey {
            case deviceId = "device_id"
            case deviceSecret = "device_secret"
            case sealing
        }
    }

    struct Empty: Decodable {}

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
            return try Date(text, strategy: Date.ISO8601FormatStyle())
        }
        return decoder
    }()

    private func credential() throws(SecurePushClientError) -> DeviceCredential {
        guard let credential = try? credentials.load() else { throw .notRegistered }
        return credential
    }

    @discardableResult
    private func store(_ credential: DeviceCredential) throws(SecurePushClientError) -> DeviceCredential {
        do {
            try credentials.save(credential)
        } catch {
            throw .unavailable(reason: "the credential store refused the new credential: \(error)")
        }
        return credential
    }

    private func encode(_ value: some Encodable) throws(SecurePushClientError) -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw .rejected(status: 0, code: "invalid_request", message: "cannot encode the request: \(error)")
        }
    }

    private func request(_ path: String, method: String = "GET", body: Data? = nil, bearer: String) -> URLRequest {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL.hasDirectoryPath ? baseURL : baseURL.appendingPathComponent(""))!)
        request.httpMethod = method
        request.httpBody = body
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        return request
    }

    private func call<T: Decodable>(_ path: String, method: String = "GET", body: Data? = nil, bearer: String) async throws(SecurePushClientError)
        -> T
    {
        let answer: RetryingRequester.Answer
        switch await requester.send(request(path, method: method, body: body, bearer: bearer)) {
        case .failure(let problem): throw .unavailable(reason: problem.reason)
        case .success(let success): answer = success
        }
        switch answer.status {
        case 200...299:
            if answer.body.isEmpty, let empty = Empty() as? T { return empty }
            guard let value = try? Self.decoder.decode(T.self, from: answer.body) else {
                throw .unavailable(reason: "the server's answer (HTTP \(answer.status)) is not what the API documents")
            }
            return value
        case 401:
            throw .unauthorized
        default:
            let detail = try? Self.decoder.decode(ErrorBody.self, from: answer.body).error
            if RetryingRequester.isRetried(answer.status) { throw .unavailable(reason: "HTTP \(answer.status)") }
            throw .rejected(status: answer.status, code: detail?.code ?? "http_\(answer.status)", message: detail?.message ?? "")
        }
    }
}

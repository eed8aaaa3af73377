import Crypto
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP2

/// A fake APNs provider API: HTTP/2 over TLS on 127.0.0.1, validating requests the way a mature
/// mock does (apns-id, method, topic, collapse id, priority vs push type, path, JWT, payload) and
/// answering with APNs status codes and `{"reason": ...}` bodies. Scriptable per device token.
public final class FakeAPNsServer: Sendable, StoppableFake {
    /// A token-auth key the fake accepts.
    public struct SigningKey: Sendable {
        /// The team id the JWT's `iss` must name.
        public var teamID: String
        /// The key id the JWT's `kid` must name.
        public var keyID: String
        /// The public half of the `.p8` key.
        public var publicKey: P256.Signing.PublicKey

        /// Creates a key entry.
        public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey) {
            self.teamID = teamID
            self.keyID = keyID
            self.publicKey = publicKey
        }
    }

    /// A scripted answer for one device token.
    public enum Behavior: Sendable {
        /// Answer with this status and reason (and `Retry-After` when given).
        case reject(status: Int, reason: String, retryAfter: String? = nil)
        /// Never answer the stream.
        case stall
        /// Answer 403 ExpiredProviderToken once, then accept (forces one JWT renewal).
        case expireProviderTokenOnce
    }

    private struct State {
        var requests: [FakeRequest] = []
        var acceptedJWTs: Set<String> = []
        var expiredJWTs: Set<String> = []
        var script = FakeScript<Behavior>()
        var unregistered: [String: Int64] = [:]
        var teamOfConnection: [Int: String] = [:]
        var delivered: [FakeRequest] = []
        var deliveredCount = 0
    }

    /// The underlying HTTP/2 server.
    public let server: FakeHTTPServer
    private let keys: [SigningKey]
    private let state: NIOLockedValueBox<State>

    /// `https://127.0.0.1:<port>` (use as both production and sandbox URL in tests).
    public var baseURL: String { server.baseURL }
    /// The CA certificate file clients must trust.
    public var caFile: String { server.authority.caFile }

    /// Starts a fake accepting JWTs signed by `keys`. Like APNs with token auth, a new connection
    /// allows `initialMaxConcurrentStreams` (one) stream until a request with a valid token arrives;
    /// then `maxConcurrentStreams`. `keepsRequests: false` (for load runs) only counts requests
    /// instead of keeping each one.
    public static func start(
        keys: [SigningKey], maxConcurrentStreams: Int = 1000, initialMaxConcurrentStreams: Int = 1, keepsRequests: Bool = true
    ) async throws -> FakeAPNsServer {
        let holder = Holder<FakeAPNsServer>()
        let server = try await FakeHTTPServer.start(allowHTTP1: false, maxConcurrentStreams: initialMaxConcurrentStreams) { request in
            holder.value?.handle(request) ?? .status(503)
        }
        let fake = FakeAPNsServer(server: server, keys: keys, maxConcurrentStreams: maxConcurrentStreams, keepsRequests: keepsRequests)
        holder.set(fake)
        return fake
    }

    private let maxConcurrentStreams: Int
    private let keepsRequests: Bool

    private init(server: FakeHTTPServer, keys: [SigningKey], maxConcurrentStreams: Int, keepsRequests: Bool) {
        self.server = server
        self.keys = keys
        self.maxConcurrentStreams = maxConcurrentStreams
        self.keepsRequests = keepsRequests
        self.state = NIOLockedValueBox(State())
    }

    /// Every request received, in order.
    public var requests: [FakeRequest] { state.withLockedValue { $0.requests } }
    /// Requests that were accepted with 200 (empty when started with `keepsRequests: false`).
    public var delivered: [FakeRequest] { state.withLockedValue { $0.delivered } }
    /// How many requests were accepted with 200 (counted whether or not requests are kept).
    public var deliveredCount: Int { state.withLockedValue { $0.deliveredCount } }
    /// How many distinct valid provider JWTs have been seen.
    public var distinctJWTs: Int { state.withLockedValue { $0.acceptedJWTs.count } }

    /// Scripts the answer for a device token (hex, any case).
    public func script(token: String, _ behavior: Behavior) {
        state.withLockedValue { $0.script.byKey[token.lowercased()] = behavior }
    }

    /// Sets the answer for every request without a scripted behaviour of its own (a provider storm);
    /// `nil` restores normal answers.
    public func setDefaultBehavior(_ behavior: Behavior?) {
        state.withLockedValue { $0.script.fallback = behavior }
    }

    /// Marks a token unregistered: 410 Unregistered with `timestamp` (milliseconds).
    public func unregister(token: String, at date: Date = Date()) {
        state.withLockedValue { $0.unregistered[token.lowercased()] = Int64(date.timeIntervalSince1970 * 1000) }
    }

    /// Every provider JWT seen so far is from now on rejected with 403 ExpiredProviderToken.
    public func expireProviderTokens() {
        state.withLockedValue { $0.expiredJWTs.formUnion($0.acceptedJWTs) }
    }

    /// Lowers (or raises) SETTINGS_MAX_CONCURRENT_STREAMS on open connections, as APNs does.
    ///
    /// Note: AsyncHTTPClient 1.37 trips a debug assertion (`_idleTimer[connectionID] == nil`) when this
    /// reaches a connection with no stream open; in tests send it while a stream is open (e.g. stalled).
    public func setMaxConcurrentStreams(_ value: Int) {
        server.sendSettings([HTTP2Setting(parameter: .maxConcurrentStreams, value: value)])
    }

    /// Sends GOAWAY with `{"reason": reason}` on open connections and closes them.
    public func sendGoAway(reason: String = "Shutdown") {
        server.sendGoAway(reason: reason)
    }

    /// Stops the server.
    public func shutdown() async {
        await server.shutdown()
    }

    func handle(_ request: FakeRequest) -> FakeReply {
        if keepsRequests {
            state.withLockedValue { $0.requests.append(request) }
        }
        let reply = validate(request)
        if case .response(200, _, _) = reply {
            let keep = keepsRequests
            state.withLockedValue { state in
                state.deliveredCount += 1
                if keep { state.delivered.append(request) }
            }
        }
        return reply
    }

    private func validate(_ request: FakeRequest) -> FakeReply {
        func reject(_ status: Int, _ reason: String, timestamp: Int64? = nil, headers: [(String, String)] = []) -> FakeReply {
            var body: [String: any Sendable] = ["reason": reason]
            if let timestamp { body["timestamp"] = timestamp }
            let apnsID = request.header("apns-id") ?? UUID().uuidString
            return .json(status, body, headers: [("apns-id", apnsID)] + headers)
        }
        guard request.httpMajorVersion == 2 else { return reject(400, "BadPath") }
        for name in ["apns-id", "apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id", "authorization"]
        where request.count(of: name) > 1 {
            return reject(400, "DuplicateHeaders")
        }
        if let apnsID = request.header("apns-id"), UUID(uuidString: apnsID) == nil { return reject(400, "BadMessageId") }
        guard request.method == "POST" else { return reject(405, "MethodNotAllowed") }
        guard let topic = request.header("apns-topic"), !topic.isEmpty else { return reject(400, "MissingTopic") }
        if let collapse = request.header("apns-collapse-id"), collapse.utf8.count > 64 { return reject(400, "BadCollapseId") }
        let validTypes: Set<String> = [
            "alert", "background", "voip", "complication", "fileprovider", "mdm", "liveactivity", "location", "pushtotalk",
        ]
        let pushType = request.header("apns-push-type") ?? "alert"
        guard validTypes.contains(pushType) else { return reject(400, "InvalidPushType") }
        if let priority = request.header("apns-priority") {
            guard ["1", "5", "10"].contains(priority) else { return reject(400, "BadPriority") }
            if pushType == "background" && priority != "5" { return reject(400, "BadPriority") }
        }
        if let expiration = request.header("apns-expiration"), Int64(expiration) == nil { return reject(400, "BadExpirationDate") }
        let prefix = "/3/device/"
        guard request.path.hasPrefix(prefix) else { return reject(404, "BadPath") }
        let token = String(request.path.dropFirst(prefix.count))
        guard !token.isEmpty else { return reject(400, "MissingDeviceToken") }
        guard token.utf8.allSatisfy({ $0 < 128 && Character(Unicode.Scalar($0)).isHexDigit }) else { return reject(400, "BadDeviceToken") }

        // Token authentication.
        guard let authorization = request.header("authorization") else { return reject(403, "MissingProviderToken") }
        guard authorization.lowercased().hasPrefix("bearer ") else { return reject(403, "InvalidProviderToken") }
        let jwt = String(authorization.dropFirst("bearer ".count))
        // A token seen and verified before needs no second signature check (a real server caches too).
        let seenBefore = state.withLockedValue { $0.acceptedJWTs.contains(jwt) }
        guard let parsed = CompactJWTReader(jwt), parsed.header["alg"] == "ES256",
            let kid = parsed.header["kid"], let key = keys.first(where: { $0.keyID == kid }),
            parsed.string("iss") == key.teamID, let iat = parsed.number("iat"),
            seenBefore || parsed.verifiesES256(with: key.publicKey)
        else { return reject(403, "InvalidProviderToken") }
        let now = Date().timeIntervalSince1970
        if iat > now + 60 { return reject(403, "InvalidProviderToken") }
        if now - iat > 3600 { return reject(403, "ExpiredProviderToken") }
        var firstValidToken = false
        let verdict: FakeReply? = state.withLockedValue { state in
            if state.expiredJWTs.contains(jwt) { return reject(403, "ExpiredProviderToken") }
            if let team = state.teamOfConnection[request.connectionID], team != key.teamID {
                return reject(403, "InvalidProviderToken")
            }
            firstValidToken = state.teamOfConnection[request.connectionID] == nil
            state.teamOfConnection[request.connectionID] = key.teamID
            state.acceptedJWTs.insert(jwt)
            return nil
        }
        if let verdict { return verdict }
        if firstValidToken {
            // Sent while this request's stream is still open, before its response.
            server.sendSettings([HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)], toConnection: request.connectionID)
        }

        let scripted: Behavior? = state.withLockedValue { $0.script.behavior(for: token.lowercased()) }
        if let timestamp = state.withLockedValue({ $0.unregistered[token.lowercased()] }) {
            return reject(410, "Unregistered", timestamp: timestamp)
        }
        switch scripted {
        case .stall?:
            return .stall
        case .reject(let status, let reason, let retryAfter)?:
            return reject(status, reason, timestamp: status == 410 ? Int64(now * 1000) : nil, headers: retryAfter.map { [("retry-after", $0)] } ?? [])
        case .expireProviderTokenOnce?:
            state.withLockedValue { state in
                state.script.byKey[token.lowercased()] = nil
                state.expiredJWTs.insert(jwt)
            }
            return reject(403, "ExpiredProviderToken")
        case nil:
            break
        }
        guard !request.body.isEmpty else { return reject(400, "PayloadEmpty") }
        guard request.body.count <= 4096 else { return reject(413, "PayloadTooLarge") }
        guard (try? JSONSerialization.jsonObject(with: request.body)) is [String: Any] else { return reject(400, "BadPayload") }
        return .response(status: 200, headers: [("apns-id", request.header("apns-id") ?? UUID().uuidString)], body: Data())
    }
}

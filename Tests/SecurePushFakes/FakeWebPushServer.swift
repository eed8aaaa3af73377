import Crypto
import Foundation
import NIOConcurrencyHelpers

/// A fake Web Push service (RFC 8030) over TLS on 127.0.0.1. Subscriptions are created by the test;
/// each push's body is decrypted with the subscription's private key (RFC 8291) and its VAPID
/// authorization verified (RFC 8292) before it is accepted with 201.
public final class FakeWebPushServer: Sendable, StoppableFake {
    /// A subscription as a browser would report it.
    public struct Subscription: Sendable {
        /// The push endpoint URL.
        public var endpoint: String
        /// The user agent key (base64url).
        public var p256dh: String
        /// The auth secret (base64url).
        public var auth: String
        /// The decryptor holding the private key.
        public var decryptor: WebPushDecryptor
    }

    /// A scripted answer for one subscription.
    public enum Behavior: Sendable {
        /// Answer with this status (and `Retry-After` when given).
        case reject(status: Int, retryAfter: String? = nil)
        /// Answer with a redirect to another URL.
        case redirect(to: String)
        /// Never answer.
        case stall
    }

    /// A push the fake accepted.
    public struct Delivery: Sendable {
        /// The request as received.
        public var request: FakeRequest
        /// The decrypted plaintext.
        public var plaintext: Data
        /// The VAPID JWT.
        public var vapidJWT: String
        /// The VAPID public key (`k`).
        public var vapidKey: String
    }

    private struct State {
        var subscriptions: [String: WebPushDecryptor] = [:]
        var script = FakeScript<Behavior>()
        var requests: [FakeRequest] = []
        var deliveries: [Delivery] = []
        var rejections: [String] = []
    }

    /// The underlying server.
    public let server: FakeHTTPServer
    private let state = NIOLockedValueBox(State())

    /// The CA certificate file clients must trust.
    public var caFile: String { server.authority.caFile }
    /// The origin VAPID `aud` must name.
    public var origin: String { server.baseURL }
    /// The origins accepted as VAPID `aud`: `origin`, and the same server named `localhost` (the
    /// certificate covers both; endpoint-pinning tests reach it by name).
    public var origins: Set<String> { [origin, "https://localhost:\(server.port)"] }

    /// Starts a fake Web Push service that closes a connection on which more than `resetLimit` streams were
    /// reset in 30 s (as push services defend against rapid resets).
    public static func start(resetLimit: Int = 200) async throws -> FakeWebPushServer {
        let holder = Holder<FakeWebPushServer>()
        let server = try await FakeHTTPServer.start(allowHTTP1: true, resetLimit: resetLimit) { holder.value?.handle($0) ?? .status(503) }
        let fake = FakeWebPushServer(server: server)
        holder.set(fake)
        return fake
    }

    private init(server: FakeHTTPServer) { self.server = server }

    /// Creates a new subscription.
    public func subscribe() -> Subscription {
        let decryptor = WebPushDecryptor()
        let path = "/push/" + UUID().uuidString.lowercased()
        state.withLockedValue { $0.subscriptions[path] = decryptor }
        return Subscription(endpoint: server.baseURL + path, p256dh: decryptor.p256dh, auth: decryptor.auth, decryptor: decryptor)
    }

    /// Scripts the answer for a subscription.
    public func script(_ subscription: Subscription, _ behavior: Behavior) {
        state.withLockedValue { $0.script.byKey[Self.path(of: subscription.endpoint)] = behavior }
    }

    /// Sets the answer for every request without a scripted behaviour of its own (a provider storm);
    /// `nil` restores normal answers.
    public func setDefaultBehavior(_ behavior: Behavior?) {
        state.withLockedValue { $0.script.fallback = behavior }
    }

    /// Every request received.
    public var requests: [FakeRequest] { state.withLockedValue { $0.requests } }
    /// Accepted pushes with their decrypted plaintext.
    public var deliveries: [Delivery] { state.withLockedValue { $0.deliveries } }
    /// Why requests were refused (400/401/403), for diagnosing a failing test.
    public var rejections: [String] { state.withLockedValue { $0.rejections } }

    /// Stops the server.
    public func shutdown() async { await server.shutdown() }

    static func path(of endpoint: String) -> String { URL(string: endpoint).map { $0.path } ?? endpoint }

    func handle(_ request: FakeRequest) -> FakeReply {
        state.withLockedValue { $0.requests.append(request) }
        func refuse(_ status: Int, _ why: String) -> FakeReply {
            state.withLockedValue { $0.rejections.append(why) }
            return .response(status: status, headers: [("content-type", "text/plain")], body: Data(why.utf8))
        }
        guard request.method == "POST" else { return refuse(405, "method") }
        guard let decryptor = state.withLockedValue({ $0.subscriptions[request.path] }) else { return .status(404) }
        switch state.withLockedValue({ $0.script.behavior(for: request.path) }) {
        case .stall?: return .stall
        case .redirect(let target)?: return .status(301, headers: [("location", target)])
        case .reject(let status, let retryAfter)?: return .status(status, headers: retryAfter.map { [("retry-after", $0)] } ?? [])
        case nil: break
        }
        guard let ttl = request.header("ttl"), let ttlValue = Int(ttl), ttlValue >= 0 else { return refuse(400, "TTL missing") }
        if let urgency = request.header("urgency"), !["very-low", "low", "normal", "high"].contains(urgency) { return refuse(400, "bad Urgency") }
        if let topic = request.header("topic") {
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            guard topic.count <= 32, topic.allSatisfy(allowed.contains) else { return refuse(400, "bad Topic") }
        }
        guard request.header("content-encoding") == "aes128gcm" else { return refuse(400, "Content-Encoding must be aes128gcm") }
        guard request.body.count <= 4096 else { return .status(413) }

        // VAPID (RFC 8292 §3): "vapid t=<jwt>, k=<key>".
        guard let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("vapid ") else {
            return refuse(401, "no vapid authorization")
        }
        var parameters: [String: String] = [:]
        for part in authorization.dropFirst(6).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { parameters[pair[0]] = pair[1] }
        }
        guard let jwtText = parameters["t"], let keyText = parameters["k"], let keyData = Data(fakeBase64URL: keyText),
            let key = try? P256.Signing.PublicKey(x963Representation: keyData), let jwt = CompactJWTReader(jwtText),
            jwt.header["alg"] == "ES256", jwt.verifiesES256(with: key)
        else { return refuse(401, "VAPID signature invalid") }
        let now = Date().timeIntervalSince1970
        guard let aud = jwt.string("aud"), origins.contains(aud) else { return refuse(403, "VAPID aud is not the origin") }
        guard let exp = jwt.number("exp"), exp > now, exp <= now + 86_400 + 60 else { return refuse(403, "VAPID exp out of range") }
        guard let sub = jwt.string("sub"), sub.hasPrefix("mailto:") || sub.hasPrefix("https:") else { return refuse(403, "VAPID sub missing") }

        let plaintext: Data
        do {
            plaintext = try decryptor.decrypt(request.body)
        } catch {
            return refuse(400, "decryption failed: \(error)")
        }
        state.withLockedValue { $0.deliveries.append(Delivery(request: request, plaintext: plaintext, vapidJWT: jwtText, vapidKey: keyText)) }
        return .status(201, headers: [("location", server.baseURL + "/message/" + UUID().uuidString.lowercased())])
    }
}

import Foundation
import NIOConcurrencyHelpers

/// A fake WNS: an OAuth client-credentials token endpoint (`/token`) and channel URIs (`/w/?token=...`)
/// accepting raw notifications, with WNS's response headers and status codes. Scriptable per channel.
/// Several apps (client ids) may be served: as with WNS, a channel belongs to the app that created it and
/// a token of another app is answered 403.
public final class FakeWNSServer: Sendable, StoppableFake {
    /// A scripted answer for one channel.
    public enum Behavior: Sendable {
        /// Answer with this status (and `Retry-After` when given).
        case reject(status: Int, retryAfter: String? = nil)
        /// Never answer.
        case stall
    }

    private struct State {
        var requests: [FakeRequest] = []
        var delivered: [FakeRequest] = []
        /// Access tokens, each issued to an app (client id).
        var tokens = FakeAccessTokens()
        var clientOfChannel: [String: String] = [:]
        var script = FakeScript<Behavior>()
    }

    /// The underlying server.
    public let server: FakeHTTPServer
    /// The apps: client ids and the secrets the token endpoint accepts for them.
    public let clients: [(id: String, secret: String)]
    /// The first app's client id.
    public var clientID: String { clients[0].id }
    /// The first app's client secret.
    public var clientSecret: String { clients[0].secret }
    /// The scope the token endpoint expects.
    public let scope: String
    private let state = NIOLockedValueBox(State())

    /// The token endpoint URL.
    public var tokenURL: String { server.baseURL + "/token" }
    /// The CA certificate file clients must trust.
    public var caFile: String { server.authority.caFile }

    /// Starts a fake WNS for one app.
    public static func start(clientID: String, clientSecret: String, scope: String = "notify.windows.com") async throws -> FakeWNSServer {
        try await start(clients: [(clientID, clientSecret)], scope: scope)
    }

    /// Starts a fake WNS for several apps (at least one).
    public static func start(clients: [(id: String, secret: String)], scope: String = "notify.windows.com") async throws -> FakeWNSServer {
        precondition(!clients.isEmpty, "a fake WNS serves at least one app")
        let holder = Holder<FakeWNSServer>()
        let server = try await FakeHTTPServer.start(allowHTTP1: true) { holder.value?.handle($0) ?? .status(503) }
        let fake = FakeWNSServer(server: server, clients: clients, scope: scope)
        holder.set(fake)
        return fake
    }

    private init(server: FakeHTTPServer, clients: [(id: String, secret: String)], scope: String) {
        self.server = server
        self.clients = clients
        self.scope = scope
    }

    /// A new channel URI on this server, belonging to the app `clientID` (default: the first app).
    public func makeChannelURI(for clientID: String? = nil) -> String {
        let uri = server.baseURL + "/w/?token=" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let owner = clientID ?? self.clientID
        state.withLockedValue { $0.clientOfChannel[Self.pathAndQuery(uri)] = owner }
        return uri
    }

    /// Scripts the answer for a channel URI.
    public func script(channel: String, _ behavior: Behavior) {
        state.withLockedValue { $0.script.byKey[Self.pathAndQuery(channel)] = behavior }
    }

    /// Sets the answer for every request without a scripted behaviour of its own (a provider storm);
    /// `nil` restores normal answers.
    public func setDefaultBehavior(_ behavior: Behavior?) {
        state.withLockedValue { $0.script.fallback = behavior }
    }

    /// Revokes all access tokens issued so far (sends then get 401).
    public func revokeAccessTokens() { state.withLockedValue { $0.tokens.revokeAll() } }

    /// Every request received.
    public var requests: [FakeRequest] { state.withLockedValue { $0.requests } }
    /// Accepted notifications.
    public var delivered: [FakeRequest] { state.withLockedValue { $0.delivered } }
    /// How many access tokens were issued.
    public var issuedAccessTokens: Int { state.withLockedValue { $0.tokens.issued.count } }

    /// Stops the server.
    public func shutdown() async { await server.shutdown() }

    static func pathAndQuery(_ uri: String) -> String {
        guard let components = URLComponents(string: uri) else { return uri }
        return components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
    }

    func handle(_ request: FakeRequest) -> FakeReply {
        state.withLockedValue { $0.requests.append(request) }
        if request.path == "/token" {
            var form: [String: String] = [:]
            for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
                }
                if parts.count == 2 { form[parts[0]] = parts[1] }
            }
            guard request.method == "POST", form["grant_type"] == "client_credentials" else { return .json(400, ["error": "unsupported_grant_type"]) }
            guard let client = clients.first(where: { $0.id == form["client_id"] }), form["client_secret"] == client.secret else {
                return .json(400, ["error": "invalid_client"])
            }
            guard form["scope"] == scope else { return .json(400, ["error": "invalid_scope"]) }
            let token = "wns-fake-" + UUID().uuidString
            state.withLockedValue { $0.tokens.issue(token, to: client.id) }
            return .json(200, ["access_token": token, "token_type": "bearer", "expires_in": 86_400])
        }
        guard request.method == "POST", request.path.hasPrefix("/w/") else { return .status(405) }
        guard request.header("transfer-encoding") == nil, request.header("expect") == nil else { return .status(400) }
        guard let auth = request.header("authorization"), auth.hasPrefix("Bearer ") else { return .status(401) }
        let token = String(auth.dropFirst("Bearer ".count))
        guard state.withLockedValue({ $0.tokens.isValid(token) }) else {
            return .status(401, headers: [("www-authenticate", "Bearer error=\"invalid_token\"")])
        }
        let owner = state.withLockedValue { $0.clientOfChannel[request.path] }
        if let owner, owner != state.withLockedValue({ $0.tokens.owner(of: token) }) {
            return .status(403, headers: [("x-wns-error-description", "The token does not belong to the app that created the channel")])
        }
        guard let type = request.header("x-wns-type"), ["wns/raw", "wns/toast", "wns/tile", "wns/badge"].contains(type) else {
            return .status(400, headers: [("x-wns-error-description", "X-WNS-Type")])
        }
        if type == "wns/raw", request.header("content-type") != "application/octet-stream" { return .status(400) }
        if let ttl = request.header("x-wns-ttl"), Int(ttl) == nil { return .status(400) }
        guard request.body.count <= 5000 else { return .status(413) }
        switch state.withLockedValue({ $0.script.behavior(for: request.path) }) {
        case .stall?: return .stall
        case .reject(let status, let retryAfter)?: return .status(status, headers: retryAfter.map { [("retry-after", $0)] } ?? [])
        case nil: break
        }
        state.withLockedValue { $0.delivered.append(request) }
        return .status(200, headers: [("x-wns-status", "received"), ("x-wns-msg-id", String(UInt64.random(in: 1...UInt64.max), radix: 16))])
    }
}

/// WNS's credentials file and settings, beside its fake.
extension FakeCredentials {
    /// Writes a WNS app's credentials file (`SECUREPUSH_WNS_APPS`) for `clientID` and `secret` and returns its path.
    public static func wnsApp(clientID: String, secret: String, tokenURL: String? = nil) throws -> String {
        var object = ["client_id": clientID, "client_secret": secret]
        if let tokenURL { object["token_url"] = tokenURL }
        return try write(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self), suffix: ".json")
    }

    /// Settings pointing WNS at `fake` (allowing channel URIs on 127.0.0.1, on loopback).
    public static func environment(wns fake: FakeWNSServer) -> [String: String] {
        [
            "SECUREPUSH_WNS_CLIENT_ID": fake.clientID, "SECUREPUSH_WNS_CLIENT_SECRET": fake.clientSecret, "SECUREPUSH_WNS_TOKEN_URL": fake.tokenURL,
            "SECUREPUSH_WNS_SCOPE": fake.scope, "SECUREPUSH_WNS_ALLOWED_HOSTS": "127.0.0.1",
            "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": loopbackNetworks, "SECUREPUSH_WNS_CA_FILE": fake.caFile,
        ]
    }
}

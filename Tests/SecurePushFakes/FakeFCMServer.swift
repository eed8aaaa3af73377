import Foundation
import NIOConcurrencyHelpers
import _CryptoExtras

/// A fake Google OAuth token endpoint (`/token`, JWT-bearer grant, RS256 verified with the service
/// account's public key) and FCM HTTP v1 API (`/v1/projects/<id>/messages:send`) on one TLS server, for one
/// or several Firebase projects. As with Google, an access token only sends for its own project (403
/// PERMISSION_DENIED otherwise), and a registration token bound to another project is answered
/// SENDER_ID_MISMATCH. Errors are the documented `{"error": {..., "details": [{"errorCode": ...}]}}` JSON.
public final class FakeFCMServer: Sendable, StoppableFake {
    /// A service account the fake trusts, and the Firebase project it sends for.
    public struct Account: Sendable {
        /// The project.
        public var projectID: String
        /// The service account email the assertion must name.
        public var clientEmail: String
        /// The public half of the account's key.
        public var publicKey: _RSA.Signing.PublicKey

        /// Creates an account entry.
        public init(projectID: String, clientEmail: String, publicKey: _RSA.Signing.PublicKey) {
            self.projectID = projectID
            self.clientEmail = clientEmail
            self.publicKey = publicKey
        }
    }

    /// A scripted answer for one registration token.
    public enum Behavior: Sendable {
        /// Answer with this HTTP status, FCM `errorCode` (nil: no FcmError detail) and message.
        case reject(status: Int, errorCode: String?, message: String = "error", retryAfter: String? = nil, fieldViolation: String? = nil)
        /// Never answer.
        case stall
    }

    private struct State {
        var requests: [FakeRequest] = []
        var delivered: [FakeRequest] = []
        /// Access tokens, each issued to a project.
        var tokens = FakeAccessTokens()
        var projectOfRegistration: [String: String] = [:]
        var script = FakeScript<Behavior>()
        var tokenLifetime = 3600
    }

    /// The underlying server.
    public let server: FakeHTTPServer
    /// The service accounts the fake trusts, one per project.
    public let accounts: [Account]
    /// The first project the fake serves.
    public var projectID: String { accounts[0].projectID }
    /// The first account's email.
    public var clientEmail: String { accounts[0].clientEmail }
    private let state = NIOLockedValueBox(State())

    /// `https://127.0.0.1:<port>`: the FCM base URL.
    public var baseURL: String { server.baseURL }
    /// The OAuth token endpoint (`token_uri` of the service account).
    public var tokenURI: String { server.baseURL + "/token" }
    /// The CA certificate file clients must trust.
    public var caFile: String { server.authority.caFile }

    /// Starts a fake for `projectID` trusting assertions signed by `publicKey` for `clientEmail`.
    public static func start(projectID: String, clientEmail: String, publicKey: _RSA.Signing.PublicKey) async throws -> FakeFCMServer {
        try await start(accounts: [Account(projectID: projectID, clientEmail: clientEmail, publicKey: publicKey)])
    }

    /// Starts a fake serving one project per account (at least one).
    public static func start(accounts: [Account]) async throws -> FakeFCMServer {
        precondition(!accounts.isEmpty, "a fake FCM serves at least one project")
        let holder = Holder<FakeFCMServer>()
        let server = try await FakeHTTPServer.start(allowHTTP1: true) { holder.value?.handle($0) ?? .status(503) }
        let fake = FakeFCMServer(server: server, accounts: accounts)
        holder.set(fake)
        return fake
    }

    private init(server: FakeHTTPServer, accounts: [Account]) {
        self.server = server
        self.accounts = accounts
    }

    /// Every request (token and send), in order.
    public var requests: [FakeRequest] { state.withLockedValue { $0.requests } }
    /// How many access tokens the token endpoint issued.
    public var issuedAccessTokens: Int { state.withLockedValue { $0.tokens.issued.count } }
    /// Accepted messages as received, in order.
    public var delivered: [FakeRequest] { state.withLockedValue { $0.delivered } }
    /// Raw JSON bodies of accepted messages, in order.
    public var deliveredBodies: [Data] { delivered.map(\.body) }

    /// Scripts the answer for a registration token.
    public func script(token: String, _ behavior: Behavior) { state.withLockedValue { $0.script.byKey[token] = behavior } }

    /// Binds a registration token to the project whose app created it: sends through another project are
    /// answered 403 SENDER_ID_MISMATCH, as Google does.
    public func bind(token: String, toProject projectID: String) { state.withLockedValue { $0.projectOfRegistration[token] = projectID } }

    /// Sets the answer for every request without a scripted behaviour of its own (a provider storm);
    /// `nil` restores normal answers.
    public func setDefaultBehavior(_ behavior: Behavior?) {
        state.withLockedValue { $0.script.fallback = behavior }
    }

    /// Revokes every access token issued so far (sends then get 401 UNAUTHENTICATED).
    public func revokeAccessTokens() { state.withLockedValue { $0.tokens.revokeAll() } }

    /// The `expires_in` of tokens issued from now on.
    public func setTokenLifetime(seconds: Int) { state.withLockedValue { $0.tokenLifetime = seconds } }

    /// Stops the server.
    public func shutdown() async { await server.shutdown() }

    func handle(_ request: FakeRequest) -> FakeReply {
        state.withLockedValue { $0.requests.append(request) }
        if request.path == "/token" { return handleToken(request) }
        return handleSend(request)
    }

    private func handleToken(_ request: FakeRequest) -> FakeReply {
        func bad(_ error: String) -> FakeReply { .json(400, ["error": error, "error_description": error]) }
        guard request.method == "POST", request.header("content-type")?.hasPrefix("application/x-www-form-urlencoded") == true else {
            return bad("invalid_request")
        }
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            if parts.count == 2 { form[parts[0]] = parts[1] }
        }
        guard form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer" else { return bad("unsupported_grant_type") }
        guard let assertion = form["assertion"], let jwt = CompactJWTReader(assertion), jwt.header["alg"] == "RS256",
            let account = accounts.first(where: { $0.clientEmail == jwt.string("iss") }), jwt.verifiesRS256(with: account.publicKey)
        else { return bad("invalid_grant") }
        let now = Date().timeIntervalSince1970
        guard jwt.string("aud") == tokenURI,
            jwt.string("scope")?.split(separator: " ").contains("https://www.googleapis.com/auth/firebase.messaging") == true,
            let iat = jwt.number("iat"), let exp = jwt.number("exp"), exp > iat, exp - iat <= 3600, iat <= now + 60, exp > now
        else { return bad("invalid_grant") }
        let token = "ya29.fake-" + UUID().uuidString
        let lifetime = state.withLockedValue { state in
            state.tokens.issue(token, to: account.projectID)
            return state.tokenLifetime
        }
        return .json(200, ["access_token": token, "expires_in": lifetime, "token_type": "Bearer"])
    }

    static func error(
        _ status: Int, _ statusText: String, _ message: String, errorCode: String?, fieldViolation: String? = nil, headers: [(String, String)] = []
    )
        -> FakeReply
    {
        var details: [[String: any Sendable]] = []
        if let errorCode {
            details.append(["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": errorCode])
        }
        if let fieldViolation {
            details.append([
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": [["field": fieldViolation, "description": message]],
            ])
        }
        return .json(
            status, ["error": ["code": status, "message": message, "status": statusText, "details": details] as [String: any Sendable]],
            headers: headers)
    }

    static func statusText(_ status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 429: "RESOURCE_EXHAUSTED"
        case 503: "UNAVAILABLE"
        default: "INTERNAL"
        }
    }

    private func handleSend(_ request: FakeRequest) -> FakeReply {
        guard request.method == "POST", let project = accounts.map(\.projectID).first(where: { request.path == "/v1/projects/\($0)/messages:send" })
        else {
            return Self.error(404, "NOT_FOUND", "not found", errorCode: nil)
        }
        guard let auth = request.header("authorization"), auth.hasPrefix("Bearer ") else {
            return Self.error(401, "UNAUTHENTICATED", "Request is missing required authentication credential.", errorCode: nil)
        }
        let token = String(auth.dropFirst("Bearer ".count))
        let valid = state.withLockedValue { $0.tokens.isValid(token) }
        guard valid else {
            return Self.error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", errorCode: nil)
        }
        guard state.withLockedValue({ $0.tokens.owner(of: token) }) == project else {
            return Self.error(403, "PERMISSION_DENIED", "Permission 'cloudmessaging.messages.create' denied on resource.", errorCode: nil)
        }
        guard request.body.count <= 4096 + 512,
            let object = try? JSONSerialization.jsonObject(with: request.body) as? [String: Any],
            let message = object["message"] as? [String: Any]
        else { return Self.error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", errorCode: "INVALID_ARGUMENT") }
        // As FCM: exactly one target; a device is a registration token (`token`) or a Firebase Installation ID (`fid`).
        let targets = ["token", "fid", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1, let registrationToken = (message["token"] ?? message["fid"]) as? String else {
            return Self.error(400, "INVALID_ARGUMENT", "Exactly one of token, fid, topic or condition must be set.", errorCode: "INVALID_ARGUMENT")
        }
        if message["fid"] != nil, FCMFIDShape.isInstallationID(registrationToken) == false {
            return Self.error(400, "INVALID_ARGUMENT", "Invalid value at 'message.fid'", errorCode: "INVALID_ARGUMENT")
        }
        if let data = message["data"] {
            guard let data = data as? [String: Any], data.values.allSatisfy({ $0 is String }) else {
                return Self.error(400, "INVALID_ARGUMENT", "data values must be strings", errorCode: "INVALID_ARGUMENT")
            }
        }
        if let android = message["android"] as? [String: Any] {
            if let ttl = android["ttl"], !((ttl as? String)?.hasSuffix("s") ?? false) {
                return Self.error(400, "INVALID_ARGUMENT", "Invalid value at 'message.android.ttl'", errorCode: "INVALID_ARGUMENT")
            }
            if let priority = android["priority"], !["high", "normal"].contains(priority as? String ?? "") {
                return Self.error(400, "INVALID_ARGUMENT", "Invalid value at 'message.android.priority'", errorCode: "INVALID_ARGUMENT")
            }
        }
        if let bound = state.withLockedValue({ $0.projectOfRegistration[registrationToken] }), bound != project {
            return Self.error(403, "PERMISSION_DENIED", "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH")
        }
        if let apns = message["apns"] {
            guard let apns = apns as? [String: Any], (apns["headers"] as? [String: Any] ?? [:]).values.allSatisfy({ $0 is String }),
                apns["payload"] == nil || (apns["payload"] as? [String: Any])?["aps"] is [String: Any]
            else {
                return Self.error(400, "INVALID_ARGUMENT", "Invalid value at 'message.apns'", errorCode: "INVALID_ARGUMENT")
            }
            let headers = apns["headers"] as? [String: String] ?? [:]
            if headers["apns-push-type"] == "background", let priority = headers["apns-priority"], priority != "5" {
                return Self.error(400, "INVALID_ARGUMENT", "Invalid APNs priority for a background push", errorCode: "INVALID_ARGUMENT")
            }
        }
        switch state.withLockedValue({ $0.script.behavior(for: registrationToken) }) {
        case .stall?:
            return .stall
        case .reject(let status, let errorCode, let text, let retryAfter, let field)?:
            return Self.error(
                status, Self.statusText(status), text, errorCode: errorCode, fieldViolation: field,
                headers: retryAfter.map { [("retry-after", $0)] } ?? [])
        case nil:
            break
        }
        let id = UInt64.random(in: 1...UInt64.max)
        state.withLockedValue { $0.delivered.append(request) }
        return .json(200, ["name": "projects/\(project)/messages/\(id)"])
    }
}

/// The shape FCM checks a Firebase Installation ID against: 22 characters of base64url, the first of them
/// c, d, e or f. Written here apart from the provider's rule, so the fake checks it independently.
enum FCMFIDShape {
    static func isInstallationID(_ text: String) -> Bool {
        text.count == 22 && "cdef".contains(text.first ?? " ")
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}

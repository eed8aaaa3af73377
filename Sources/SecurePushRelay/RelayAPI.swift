import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import SecurePushCore
import SecurePushPostgres
import SecurePushRelayProtocol

/// The relay's HTTP routes: `POST /v1/relay/tokens` and `POST /v1/relay/pushes` for installations (each
/// request carries an ES256 token signed with the installation's key, `RelayRequestToken`), and the
/// operations routes `/healthz`, `/readyz`, `/status` and `/metrics`.
public struct RelayAPI: Sendable {
    let store: RelayStore
    let forwarder: RelayForwarder
    /// The key of the token digests (`SECUREPUSH_RELAY_TOKEN_KEY_FILE`).
    let tokenKey: SymmetricKey
    /// The installations' keys (checked against the database with every request).
    let keys: RelayKeyCache
    let limits: RelayLimits
    /// Failed authentications per client address.
    let authFailures: RateLimiter
    /// Requests per installation (once their signature checked).
    let installationRequests: RateLimiter
    /// Pushes of installations without quotas, counted here and written every second.
    let usage: RelayUsage
    let readiness: @Sendable () async throws -> [String]
    let metricsText: @Sendable () -> String
    let logger: Logger

    /// The largest request body accepted.
    static let maxBody = 1 << 20

    /// Wires the routes.
    public init(
        store: RelayStore, forwarder: RelayForwarder, tokenKey: SymmetricKey, usage: RelayUsage, limits: RelayLimits = RelayLimits(),
        readiness: @escaping @Sendable () async throws -> [String], metricsText: @escaping @Sendable () -> String, logger: Logger
    ) {
        self.store = store
        self.limits = limits
        self.keys = RelayKeyCache(unknownFor: limits.unknownFor)
        self.authFailures = RateLimiter(limits.authFailures)
        self.installationRequests = RateLimiter(limits.installationRequests)
        self.usage = usage
        self.forwarder = forwarder
        self.tokenKey = tokenKey
        self.readiness = readiness
        self.metricsText = metricsText
        self.logger = logger
    }

    /// Which routes a listener serves.
    public enum Routes: Sendable {
        /// The relay API and the probes (`/healthz`, `/readyz`) on one listener, when there is no operations
        /// listener: `/status` and `/metrics`, which name every installation and its counts, are served on the
        /// operations listener (`SECUREPUSH_OPS_PORT`) alone, never where installations connect (issue 48).
        case all
        /// The relay API alone (`SECUREPUSH_OPS_PORT` serves the operations routes).
        case relay
        /// The operations routes alone.
        case operations
    }

    /// The router of `routes`.
    public func router(_ routes: Routes = .all) -> Router<RelayRequestContext> {
        let router = Router(context: RelayRequestContext.self)
        var methods: [String: [HTTPRequest.Method]] = [:]
        if routes != .operations { methods["/v1/relay/pushes"] = [.post]; methods["/v1/relay/tokens"] = [.post] }
        if routes != .relay { for path in ["/healthz", "/readyz"] { methods[path] = [.get, .head] } }
        if routes == .operations { for path in ["/status", "/metrics"] { methods[path] = [.get, .head] } }
        router.add(middleware: RelayMethodNotAllowed(methods: methods))
        if routes != .operations {
            router.post("/v1/relay/pushes") { request, context in
                let client = self.client(request, context)
                return await self.answer(client: client) { try await self.pushes(request, client: client) }
            }
            router.post("/v1/relay/tokens") { request, context in
                let client = self.client(request, context)
                return await self.answer(client: client) { try await self.tokens(request, client: client) }
            }
        }
        guard routes != .relay else { return router }
        router.get("/healthz") { _, _ in RelayError.json(["status": "ok"]) }
        router.get("/readyz") { _, _ in await self.answer { try await self.ready() } }
        guard routes == .operations else { return router }
        router.get("/status") { _, _ in await self.answer { try await self.status() } }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"], body: .init(byteBuffer: ByteBuffer(string: self.metricsText())))
        }
        return router
    }

    /// `X-Forwarded-For`, made once (the API's `HTTPField.Name.xForwardedFor` is internal to its module).
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The request's client address: the peer, or behind a trusted proxy the forwarded client.
    func client(_ request: Request, _ context: RelayRequestContext) -> String {
        ClientAddress.resolve(
            peer: context.remoteAddress?.ipAddress, forwardedFor: request.headers[Self.forwardedFor],
            trustedProxies: limits.trustedProxies)
    }

    /// Runs a handler, turning its errors into the relay's JSON errors (a database that is unavailable is a 503).
    /// A failed authentication counts against `client` (`limits.authFailures`).
    func answer(client: String? = nil, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let error as RelayError {
            if error.status == .unauthorized, let client { _ = authFailures.take(client) }
            return error.response
        } catch {
            logger.databaseError("relay request failed", error)
            return RelayError.unavailable.response
        }
    }

    /// The digest that binds `token` of `platform`.
    func digest(platform: String, token: String) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data((platform + "\u{0}" + token).utf8), using: tokenKey))
    }

    /// A request whose token checked with a key of its installation (`admit` still has to confirm the key).
    struct Signed {
        var installation: UUID
        var token: String
        var path: String
        var body: ByteBuffer
        var key: RelayKeyCache.Entry
        var claims: RelayRequestClaims
        /// Whether `key` came from the cache (it may be stale: one reload is allowed).
        var cached: Bool
    }

    /// Checks the request's token with its installation's key, in the order that costs least: an address past
    /// its failed authentications is refused before anything (`429`); the header and the installation it names
    /// (cached, remembered as unknown, or looked up) before the body is read; then the body (bounded in size
    /// and time) and the signature over it. A cached key that does not verify is reloaded once (it may have
    /// been rotated).
    func signed(_ request: Request, path: String, client: String) async throws -> Signed {
        if let wait = authFailures.wait(client) { throw RelayError.throttled(retryAfter: wait.secondsDouble) }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "), header.utf8.count < 4096 else {
            throw RelayError.unauthorized
        }
        let token = String(header.dropFirst("Bearer ".count))
        guard let installation = await RelayRequestToken.installation(of: token) else { throw RelayError.unauthorized }
        let cached = keys.cached(installation)
        let key: RelayKeyCache.Entry
        if let cached { key = cached } else { key = try await loadKey(installation) }
        let body = try await readBody(request)
        if let claims = try? await verify(token, installation, path, body, key) {
            return Signed(installation: installation, token: token, path: path, body: body, key: key, claims: claims, cached: cached != nil)
        }
        guard cached != nil else { throw RelayError.unauthorized }
        return try await reloaded(installation, token: token, path: path, body: body)
    }

    /// The body, at most `maxBody` bytes, arrived within `limits.bodyReadTimeout`.
    func readBody(_ request: Request) async throws -> ByteBuffer {
        do {
            // Joined: the abandoned read has ended before the server reads the connection again (RequestBody.read).
            return try await withDeadlineJoined(limits.bodyReadTimeout) { try await request.body.collect(upTo: Self.maxBody) }
        } catch is DeadlineExceeded {
            throw RelayError.bodyTimeout
        } catch {
            throw RelayError.tooLarge
        }
    }

    /// The key of `installation` from the database (or `unauthorized`: no such installation).
    func loadKey(_ installation: UUID) async throws -> RelayKeyCache.Entry {
        do {
            guard let loaded = try await keys.load(installation, from: store) else { throw RelayError.unauthorized }
            return loaded
        } catch is RelayWireError {
            throw RelayError.unauthorized
        }
    }

    /// Loads the key of `installation` and checks the token with it.
    func reloaded(_ installation: UUID, token: String, path: String, body: ByteBuffer) async throws -> Signed {
        let key = try await loadKey(installation)
        guard let claims = try? await verify(token, installation, path, body, key) else { throw RelayError.unauthorized }
        return Signed(installation: installation, token: token, path: path, body: body, key: key, claims: claims, cached: false)
    }

    /// Counts a signed request against its installation's request rate (`429` past it).
    func counted(_ signed: Signed) throws -> Signed {
        if let wait = installationRequests.take(signed.installation.uuidString) {
            throw RelayError.quota(retryAfter: wait.secondsDouble, "the installation's request rate is exceeded")
        }
        return signed
    }

    private func verify(_ token: String, _ installation: UUID, _ path: String, _ body: ByteBuffer, _ key: RelayKeyCache.Entry) async throws
        -> RelayRequestClaims
    {
        try await key.verifier.verify(token, installation: installation, method: "POST", path: path, body: body.readableBytesView)
    }

    /// Admits a signed request in one round trip (`RelayStore.admit`): its key still current, the
    /// installation enabled, the request id new; returns the bound digests among `digests`, the quota's wait
    /// and the key (with the installation's policy) as confirmed current. A cached key found stale is reloaded
    /// and the token checked again, once.
    func admit(_ signed: Signed, digests: [Data]) async throws -> (bound: Set<Data>, wait: Double, key: RelayKeyCache.Entry) {
        var signed = signed
        while true {
            let admission = try await store.admit(
                signed.installation, keyVersion: signed.key.keyVersion, jti: signed.claims.jti.value, expires: signed.claims.exp.value,
                digests: digests)
            switch admission {
            case .admitted(let bound, let wait, let counted):
                // Each push counts, a token named twice in a batch twice (as the quota counts them in `admit`).
                if !counted, wait <= 0 { usage.add(signed.installation, digests.filter(bound.contains).count) }
                return (bound, wait, signed.key)
            case .disabled: throw RelayError.disabled
            case .replay: throw RelayError.unauthorized
            case .stale:
                guard signed.cached else {
                    keys.forget(signed.installation)
                    throw RelayError.unauthorized
                }
                signed = try await reloaded(signed.installation, token: signed.token, path: signed.path, body: signed.body)
            }
        }
    }

    func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(buffer: body))
        } catch {
            throw RelayError.badRequest("the body is not a valid \(type) (JSON)")
        }
    }

    func tokens(_ request: Request, client: String) async throws -> Response {
        let signed = try counted(try await signed(request, path: "/v1/relay/tokens", client: client))
        let installation = signed.installation
        let changes = try decode(RelayTokenChanges.self, signed.body)
        guard changes.bind.count <= RelayTokenChanges.maxTokens, changes.release.count <= RelayTokenChanges.maxTokens else {
            throw RelayError.badRequest("at most \(RelayTokenChanges.maxTokens) tokens to bind and as many to release per request")
        }
        for token in changes.bind + changes.release {
            guard let platform = Platform(rawValue: token.platform), RelayPush.relayedPlatforms.contains(platform) else {
                throw RelayError.badRequest("platform \(token.platform) is not relayed (apns, fcm and wns are; Web Push needs no relay)")
            }
            do {
                try RelayPushLimits.check(token: token.token, platform: platform)
            } catch let error as RelayWireError {
                throw RelayError.badRequest(error.description)
            }
        }
        _ = try await admit(signed, digests: [])
        let released = try await store.release(installation, digests: changes.release.map { digest(platform: $0.platform, token: $0.token) })
        guard let bound = try await store.bind(installation, digests: changes.bind.map { digest(platform: $0.platform, token: $0.token) }) else {
            throw RelayError.quota(retryAfter: 3600, "the installation's quota of registered tokens is reached")
        }
        logger.debug(
            "relay tokens changed", metadata: ["relay.installation": "\(installation)", "relay.bound": "\(bound)", "relay.released": "\(released)"])
        return RelayError.json(["bound": bound, "released": released])
    }

    func pushes(_ request: Request, client: String) async throws -> Response {
        let signed = try counted(try await signed(request, path: "/v1/relay/pushes", client: client))
        let installation = signed.installation
        let batch = try decode(RelayPushBatch.self, signed.body)
        guard batch.pushes.count <= RelayPushBatch.maxPushes else {
            throw RelayError.badRequest("at most \(RelayPushBatch.maxPushes) pushes per request")
        }
        var outcomes = [RelayOutcome?](repeating: nil, count: batch.pushes.count)
        var pushes: [(Int, Push, Data)] = []
        for (index, relayed) in batch.pushes.enumerated() {
            do {
                pushes.append((index, try relayed.push(), digest(platform: relayed.platform, token: relayed.token)))
            } catch let error as RelayWireError {
                outcomes[index] = RelayOutcome(outcome: .refused, reason: error.description)
            }
        }
        let (bound, wait, key) = try await admit(signed, digests: pushes.map(\.2))
        guard wait <= 0 else { throw RelayError.quota(retryAfter: wait, "the installation's push quota is used up") }
        // The installation's policy as `admit` confirmed it current (issue 48): a critical alert sounds through a
        // muted phone, so only an installation allowed to may send one (a refused one still counted).
        let allowed = pushes.filter { $0.1.urgency != .critical || key.criticalAllowed }
        for (index, push, _) in pushes where push.urgency == .critical && !key.criticalAllowed {
            outcomes[index] = .criticalRefused
        }
        let sendable = allowed.filter { bound.contains($0.2) }
        for (index, _, digest) in allowed where !bound.contains(digest) { outcomes[index] = .unregistered }
        let sent = await forwarder.send(sendable.map { ($0.0, $0.1) }, installation: installation)
        for (index, outcome) in sent { outcomes[index] = outcome }
        let results = outcomes.map { $0 ?? RelayOutcome(outcome: .retry, scope: "provider", reason: "not sent") }
        forwarder.count(results)
        return RelayError.json(RelayPushResults(results: results))
    }

    func ready() async throws -> Response {
        let pending = try await readiness()
        guard pending.isEmpty else {
            return RelayError.json(["status": "migrations pending: \(pending.joined(separator: ", "))"], status: .serviceUnavailable)
        }
        return RelayError.json(["status": "ready"])
    }

    func status() async throws -> Response {
        let installations = try await store.installations()
        struct Row: Encodable {
            var id: UUID
            var name: String
            var disabled: Bool
            var tokens: Int
            var pushes_last_hour: Int
            var pushes_last_day: Int
        }
        struct Status: Encodable {
            var installations: Int
            var disabled: Int
            var tokens: Int
            var pushes_last_hour: Int
            var pushes_last_day: Int
            /// The ten installations with the most pushes in the last hour (bounded, whatever their number).
            var top: [Row]
            var platforms: [String]
        }
        let top = RelayStore.busiest(installations, count: 10).map {
            Row(
                id: $0.id, name: $0.name, disabled: $0.disabled, tokens: $0.tokens, pushes_last_hour: $0.pushesLastHour,
                pushes_last_day: $0.pushesLastDay)
        }
        return RelayError.json(
            Status(
                installations: installations.count, disabled: installations.filter(\.disabled).count,
                tokens: installations.reduce(0) { $0 + $1.tokens },
                pushes_last_hour: installations.reduce(0) { $0 + $1.pushesLastHour },
                pushes_last_day: installations.reduce(0) { $0 + $1.pushesLastDay },
                top: top, platforms: forwarder.platforms.map(\.rawValue).sorted()))
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1
import PostgresNIO
import SecurePushCore
import SecurePushRelayProtocol

/// The relay as vendors deploy it, for the failover matrix's `relay` route (issue 48): its own database on the
/// HA cluster (migrated by the owner, served by a login of `securepush_relay_service`), two `securepush serve
/// --role relay` processes pushing to the fakes (`r1`, `r2`: the fakes' process keys after the SecurePush
/// processes' own, so every push names the relay that sent it), and HAProxy in HTTP mode balancing the self-hosted servers' requests over
/// both. The self-hosted processes push through it as one installation (`selfHostedEnvironment`).
final class RelayPair: Sendable {
    /// How many relay processes (and so how many process keys of the fakes they take).
    static let count = 2
    /// The daily quota of the installation `checkAcrossProcesses` spends.
    static let checkQuota = 10

    /// The fakes' process index of the first relay (the SecurePush processes take the ones before).
    let firstKeyIndex: Int
    let ports: [Int]
    let balancerPort: Int
    let processes: [ServerProcess]
    /// The installation the self-hosted processes push as.
    let installation: UUID
    let keyFile: String
    /// A second installation with a daily quota of `checkQuota`, for the cross-process checks.
    let quota: InstallationCredentials
    private let owner: ChaosDatabase
    private let login: String
    /// The driver's HTTP client (`ChaosRun`'s).
    private let http: HTTPClient

    private init(
        firstKeyIndex: Int, ports: [Int], balancerPort: Int, processes: [ServerProcess], installation: UUID, keyFile: String,
        quota: InstallationCredentials, owner: ChaosDatabase, login: String, http: HTTPClient
    ) {
        self.firstKeyIndex = firstKeyIndex
        self.ports = ports
        self.balancerPort = balancerPort
        self.processes = processes
        self.installation = installation
        self.keyFile = keyFile
        self.quota = quota
        self.owner = owner
        self.login = login
        self.http = http
    }

    /// What the self-hosted processes need to push through the balancer (their own provider settings left out).
    var selfHostedEnvironment: [String: String] {
        [
            "SECUREPUSH_PROVIDERS": "relay", "SECUREPUSH_RELAY_PLATFORMS": "apns,fcm",
            "SECUREPUSH_RELAY_URL": "http://127.0.0.1:\(balancerPort)",
            "SECUREPUSH_RELAY_INSTALLATION_ID": installation.uuidString.lowercased(), "SECUREPUSH_RELAY_KEY_FILE": keyFile,
            "SECUREPUSH_RELAY_TIMEOUT": "3s",
        ]
    }

    /// Migrates the relay's database (`ownerURL`), adds the installations, creates the relays' login, starts both
    /// relays (with the fakes' process keys from `firstKeyIndex` on) and the balancer, and waits until a request through
    /// the balancer is answered.
    static func start(
        ownerURL: String, binary: String, fakes: ProviderFakes, firstKeyIndex: Int, http: HTTPClient, workDirectory: String
    ) async throws -> RelayPair {
        let owner = try ChaosDatabase(url: ownerURL)
        let tokenKey = "\(workDirectory)/relay-token.key"
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: tokenKey))
        let ownerEnvironment = [
            "DATABASE_URL": ownerURL, "SECUREPUSH_RELAY_TOKEN_KEY_FILE": tokenKey, "SECUREPUSH_LOG_LEVEL": "notice",
        ]
        func relayCommand(_ name: String, _ arguments: [String]) async throws -> String {
            try await ServerProcess.run(
                binary: binary, arguments: ["relay"] + arguments, environment: ownerEnvironment, logDirectory: workDirectory, name: name)
            return (try? String(contentsOfFile: "\(workDirectory)/\(name).log", encoding: .utf8)) ?? ""
        }
        log("migrating the relay's database")
        _ = try await relayCommand("relay-migrate", ["migrate"])
        let load = try InstallationCredentials(
            printed: try await relayCommand("relay-add", ["installation", "add", "--name", "chaos", "--max-tokens", "none"]))
        let installation = load.id
        let quota = try InstallationCredentials(
            printed: try await relayCommand("relay-add-quota", ["installation", "add", "--name", "quota", "--pushes-per-day", "\(checkQuota)"]))
        let keyFile = "\(workDirectory)/relay-installation.key"
        try load.key.text.write(toFile: keyFile, atomically: true, encoding: .utf8)

        // The relays run as a login of the relay's role, as docs/relay.md says (never as the owner).
        let login = "chaos_relay_\(UUID().uuidString.prefix(8).lowercased())"
        let password = UUID().uuidString
        try await owner.execute(PostgresQuery(unsafeSQL: "CREATE ROLE \(login) LOGIN PASSWORD '\(password)' IN ROLE securepush_relay_service"))
        let loginURL = try replacingCredentials(of: ownerURL, user: login, password: password)

        var processes: [ServerProcess] = []
        do {
            let ports = try (0..<count).map { _ in try freePort() }
            for (index, port) in ports.enumerated() {
                var environment = ChaosRun.baseEnvironment
                environment.merge(fakes.environment(process: firstKeyIndex + index, platforms: [.apns, .fcm])) { _, new in new }
                environment["DATABASE_URL"] = loginURL
                environment["SECUREPUSH_RELAY_HOST"] = "127.0.0.1"
                environment["SECUREPUSH_RELAY_PORT"] = "\(port)"
                environment["SECUREPUSH_RELAY_TOKEN_KEY_FILE"] = tokenKey
                processes.append(
                    try ServerProcess.start(
                        name: "r\(index + 1)", binary: binary, arguments: ["serve", "--role", "relay"], environment: environment, port: port,
                        logDirectory: workDirectory))
            }
            let balancerPort = try freePort()
            let configuration = "\(workDirectory)/relay-haproxy.cfg"
            try balancerConfiguration(port: balancerPort, relays: ports).write(toFile: configuration, atomically: true, encoding: .utf8)
            processes.append(
                try ServerProcess.start(
                    name: "relay-haproxy", binary: try haproxy(), arguments: ["-db", "-f", configuration], environment: [:], port: balancerPort,
                    logDirectory: workDirectory))
            let pair = RelayPair(
                firstKeyIndex: firstKeyIndex, ports: ports, balancerPort: balancerPort, processes: processes, installation: installation,
                keyFile: keyFile, quota: quota, owner: owner, login: login, http: http)
            try await pair.waitServing()
            return pair
        } catch {
            for process in processes { await process.stop(grace: .seconds(5)) }
            try? await owner.execute(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(login)"))
            throw error
        }
    }

    /// Stops the relays and the balancer and drops the relays' login.
    func stop() async {
        for process in processes { await process.stop(grace: .seconds(10)) }
        try? await owner.execute(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(login)"))
    }

    /// Pushes each relay sent that the fakes accepted, by relay (`r1 N, r2 M`), and whether both sent some.
    func pushesByRelay(_ attempts: [PushAttempt]) -> (cell: String, bothSent: Bool) {
        let counts = (0..<Self.count).map { index in attempts.filter { $0.accepted && $0.sender == firstKeyIndex + index }.count }
        return (counts.enumerated().map { "r\($0.offset + 1) \($0.element)" }.joined(separator: ", "), counts.allSatisfy { $0 > 0 })
    }

    /// The relay's own count of the load installation's pushes (`securepush_relay.usage`).
    func usage() async throws -> Int64 {
        try await owner.scalar(
            "SELECT coalesce(sum(pushes), 0)::bigint FROM securepush_relay.usage WHERE installation_id = \(installation)", as: Int64.self)
    }

    /// After the failover, on the relays' new primary: a signed request answered by `r1` and replayed to `r2` is
    /// refused (the request ids are shared), and the quota installation's daily quota holds across both relays
    /// (a binding, then `checkQuota + 4` pushes alternating between the relays: exactly `checkQuota` sent).
    /// Returns the failures, empty when both held.
    func checkAcrossProcesses() async throws -> [String] {
        var failures: [String] = []
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        let bind = try JSONEncoder().encode(RelayTokenChanges(bind: [RelayToken(platform: "apns", token: token)]))
        let bound = try await post(bind, to: "/v1/relay/tokens", relay: 0)
        if bound.status != 200 { failures.append("the quota installation's binding answered \(bound.status)") }
        let replayed = try await post(bind, to: "/v1/relay/tokens", relay: 1, token: bound.token)
        if replayed.status != 401 { failures.append("a request replayed to the other relay answered \(replayed.status), not 401") }
        var sent = 0
        for index in 0..<(Self.checkQuota + 4) {
            let push = RelayPush(
                Push(
                    notificationID: NotificationID(UUID()), target: PushTarget(deviceID: UUID(), platform: .apns, token: token),
                    expiresAt: Date().addingTimeInterval(3600)))
            let answer = try await post(
                try JSONEncoder().encode(RelayPushBatch(pushes: [push])), to: "/v1/relay/pushes", relay: index % Self.count)
            if answer.status == 200, let results = try? JSONDecoder().decode(RelayPushResults.self, from: answer.body),
                results.results.first?.outcome == .sent
            {
                sent += 1
            }
        }
        if sent != Self.checkQuota { failures.append("\(sent) of \(Self.checkQuota + 4) pushes sent under a daily quota of \(Self.checkQuota)") }
        return failures
    }

    /// POSTs `body` to relay `relay` (0: `r1`) signed as the quota installation, or with `token` when given (a replay).
    private func post(_ body: Data, to path: String, relay: Int, token: String? = nil) async throws -> (
        status: UInt, body: Data, token: String
    ) {
        let signed: String
        if let token {
            signed = token
        } else {
            signed = try await RelayRequestToken.sign(installation: quota.id, key: quota.key, method: "POST", path: path, body: body)
        }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(ports[relay])\(path)")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(signed)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(data: body))
        let response = try await http.execute(request, timeout: .seconds(10))
        return (response.status.code, Data(buffer: try await response.body.collect(upTo: 1 << 20)), signed)
    }

    private func waitServing() async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        let targets = ports.enumerated().map { ("r\($0.offset + 1)", $0.element) } + [("the balancer", balancerPort)]
        for (name, port) in targets {
            while true {
                if let process = processes.first(where: { !$0.isRunning }) {
                    throw ChaosError("\(process.name) exited: \(String(process.log().suffix(1500)))")
                }
                let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/healthz")
                if let response = try? await http.execute(request, timeout: .seconds(2)), response.status == .ok { break }
                guard ContinuousClock.now < deadline else { throw ChaosError("relay: \(name) not serving in 60 s") }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private static func replacingCredentials(of url: String, user: String, password: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw ChaosError("cannot parse the relay's database URL") }
        components.user = user
        components.password = password
        guard let text = components.string else { throw ChaosError("cannot rebuild the relay's database URL") }
        return text
    }

    private static func haproxy() throws -> String {
        guard let path = ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"].first(where: FileManager.default.isExecutableFile)
        else { throw ChaosError("haproxy is not installed (ops/failover.d/cluster.sh installs it)") }
        return path
    }

    /// HTTP mode, each request balanced over both relays; a relay failing its health check is taken out.
    private static func balancerConfiguration(port: Int, relays: [Int]) -> String {
        """
        global
            maxconn 500
        defaults
            mode http
            timeout connect 2s
            timeout client 60s
            timeout server 60s
            timeout http-keep-alive 30s
            timeout check 1s
        listen relays
            bind 127.0.0.1:\(port)
            balance roundrobin
            option httpchk GET /healthz
            default-server inter 1s fall 2 rise 1
        \(relays.enumerated().map { "    server r\($0.offset + 1) 127.0.0.1:\($0.element) check" }.joined(separator: "\n"))

        """
    }
}

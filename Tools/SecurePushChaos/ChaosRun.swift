import AsyncHTTPClient
import Foundation
import NIOHTTP1
import PostgresNIO
import SecurePushFakes

/// Runs one row: fakes up, database migrated, real `securepush serve` processes (by default `p1` with the
/// API and a dispatcher, `p2` a dispatcher; see `RowPlan.Layout`), devices registered through the API, the producer running, the
/// row's disruption, then the drain and the loss check.
struct ChaosRun {
    let options: ChaosOptions
    let plan: RowPlan

    /// The API's deadline for one database call (`SECUREPUSH_API_DB_TIMEOUT`): shorter than the outages, so
    /// that readiness can say 503 while the database is away.
    static let apiDatabaseTimeout = 2

    /// Settings every process gets: short leases and retries so that a row's effects show within seconds,
    /// enough attempts that a minute-long storm exhausts none, and per-request deadlines of 2 s.
    static let baseEnvironment: [String: String] = [
        "SECUREPUSH_API_DB_TIMEOUT": "\(apiDatabaseTimeout)s",
        "SECUREPUSH_LOG_LEVEL": "notice",
        "SECUREPUSH_LEASE": "10s",
        "SECUREPUSH_MAINTENANCE_INTERVAL": "500ms",
        "SECUREPUSH_HEARTBEAT_INTERVAL": "1s",
        "SECUREPUSH_POLL_INTERVAL": "500ms",
        "SECUREPUSH_CONCURRENCY": "8",
        "SECUREPUSH_LANES": "2",
        "SECUREPUSH_BATCH_SIZE": "16",
        "SECUREPUSH_RETRY_BASE": "200ms",
        "SECUREPUSH_RETRY_MAX": "2s",
        "SECUREPUSH_MAX_ATTEMPTS": "100",
        "SECUREPUSH_DB_POOL_SIZE": "5",
        "SECUREPUSH_DB_TIMEOUT": "5s",
        "SECUREPUSH_APNS_TIMEOUT": "2s",
        "SECUREPUSH_FCM_TIMEOUT": "2s",
        "SECUREPUSH_WEBPUSH_TIMEOUT": "2s",
        "SECUREPUSH_WNS_TIMEOUT": "2s",
    ]

    /// The settings of process `index`.
    /// With `relay`, the processes push through it and get no credentials of the push services.
    func environment(process index: Int, fakes: ProviderFakes, jwtSecret: String, relay: RelayPair?) -> [String: String] {
        var environment = Self.baseEnvironment
        environment.merge(plan.environment) { _, new in new }
        if let relay {
            environment.merge(relay.selfHostedEnvironment) { _, new in new }
        } else {
            environment.merge(fakes.environment(process: index, platforms: plan.platforms)) { _, new in new }
        }
        environment["DATABASE_URL"] = options.databaseURL
        environment["SECUREPUSH_USER_JWT_SECRET"] = jwtSecret
        return environment
    }

    func run() async throws -> RowReport {
        let report = RowReport(row: options.row)
        let started = ContinuousClock.now
        let database = try ChaosDatabase(url: options.databaseURL)
        // Keys for the relays too (after the SecurePush processes' own), when the row has them.
        let fakes = try await ProviderFakes.start(processes: plan.layout.processes + (options.relayDatabaseURL == nil ? 0 : RelayPair.count))
        // Probes must not queue behind each other in the client: room for every call in flight at once.
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)
        var processes: [ServerProcess] = []
        var relay: RelayPair?
        do {
            if let url = options.relayDatabaseURL {
                relay = try await RelayPair.start(
                    ownerURL: url, binary: options.binary, fakes: fakes, firstKeyIndex: plan.layout.processes, http: http,
                    workDirectory: options.workDirectory)
            }
            let jwtSecret = "chaos-" + (0..<4).map { _ in UUID().uuidString }.joined()
            log("migrating")
            try await ServerProcess.run(
                binary: options.binary, arguments: ["migrate"],
                environment: environment(process: 0, fakes: fakes, jwtSecret: jwtSecret, relay: relay),
                logDirectory: options.workDirectory, name: "migrate")
            let port = try freePort()
            processes.append(
                try ServerProcess.start(
                    name: "p1", binary: options.binary, arguments: ["serve", "--role", plan.layout.firstRole, "--port", "\(port)"],
                    environment: environment(process: 0, fakes: fakes, jwtSecret: jwtSecret, relay: relay), port: port,
                    logDirectory: options.workDirectory))
            for index in 1..<plan.layout.processes {
                processes.append(
                    try ServerProcess.start(
                        name: "p\(index + 1)", binary: options.binary,
                        arguments: ["serve", "--role", "dispatcher", "--host", "127.0.0.1", "--port", "0"],
                        environment: environment(process: index, fakes: fakes, jwtSecret: jwtSecret, relay: relay), port: nil,
                        logDirectory: options.workDirectory))
            }
            let api = APIClient(http: http, port: port)
            let dispatchers = plan.layout.firstRole == "api" ? Array(processes.dropFirst()) : processes
            try await waitUntilServing(processes, dispatchers: dispatchers, api: api, database: database)
            log("registering devices")
            let devices = try await registerDevices(api: api, fakes: fakes, tokens: UserTokens(secret: jwtSecret))
            let producer = Producer(
                database: database, users: Array(Set(devices.map(\.user))).sorted(), rate: options.rate, statementDeadline: plan.statementDeadline)
            let context = ChaosContext(
                options: options, plan: plan, fakes: fakes, database: database, processes: processes, api: api, devices: devices,
                producer: producer, report: report, relay: relay)

            log("load at \(options.rate)/s")
            let producing = Task { await producer.run() }
            do {
                try await Task.sleep(for: plan.warmUp)
                try await plan.disrupt(context)
                try await Task.sleep(for: plan.tail)
            } catch {
                producing.cancel()
                await producing.value
                throw error
            }
            producing.cancel()
            await producing.value
            try await finish(context, started: started)
        } catch {
            for process in processes { await process.stop(grace: .seconds(5)) }
            await relay?.stop()
            await fakes.shutdown()
            try? await http.shutdown()
            throw error
        }
        await relay?.stop()
        await fakes.shutdown()
        try await http.shutdown()
        return report
    }

    /// What is left to push (`securepush.work_left`: deliveries, notifications awaiting their fan-out, leases' items).
    private static let leftToPush: PostgresQuery = "SELECT securepush.work_left()"

    /// Resolves uncertain inserts, waits for the queue to drain, stops the processes and checks.
    private func finish(_ context: ChaosContext, started: ContinuousClock.Instant) async throws {
        let (database, report) = (context.database, context.report)
        log("producer stopped: \(context.producer.snapshot.committed.count) committed, \(context.producer.snapshot.uncertain.count) uncertain")
        var resolved = 0
        var uncertainLeft = context.producer.snapshot.uncertain.count
        if uncertainLeft > 0 {
            _ = await database.eventually(timeout: .seconds(30)) {
                resolved = try await context.producer.resolveUncertain()
                return true
            }
            uncertainLeft = context.producer.snapshot.uncertain.count
            report.figure("uncertain commits", "\(resolved + uncertainLeft) (\(resolved) found committed)")
        }
        log("draining")
        let drainStart = ContinuousClock.now
        let drained = await database.eventually(timeout: plan.drainTimeout) {
            // Nothing left to push: no delivery, no notification still waiting for its fan-out (a notification
            // committed just before the producer stopped may have no deliveries yet) and no lease (since 046 a
            // claim's items live in its lease until their outcomes are written; a claim that committed while its
            // dispatcher lost the connection is rescued at the lease's end).
            try await database.scalar(Self.leftToPush, as: Int64.self) == 0
        }
        report.figure("drain", drained ? seconds((ContinuousClock.now - drainStart).seconds) : "not drained")
        report.check("queue drained", drained)
        log("stopping the SecurePush processes")
        for process in context.processes { await process.stop() }
        log("checking")

        let outcomes = try await database.with { connection in
            var outcomes: [String: Int64] = [:]
            let rows = try await connection.query(
                "SELECT outcome, count(*) FROM securepush.delivery_log GROUP BY outcome", logger: database.logger)
            for try await (outcome, count) in rows.decode((String, Int64).self) { outcomes[outcome] = count }
            return outcomes
        }
        let notSent = outcomes.filter { $0.key != "sent" }
        report.check("every delivery logged sent", notSent.isEmpty)
        if !notSent.isEmpty {
            report.figure("not sent", notSent.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
        }

        let devicesByKey = Dictionary(context.devices.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let attempts = PushAttempt.collect(from: context.fakes, devices: devicesByKey)
        let loss = LossReport(ledger: context.producer.snapshot.committed, devices: context.devices, attempts: attempts)
        for pair in loss.lostExamples {
            log("lost: notification \(pair.notification) to \(pair.platform.rawValue) device \(pair.deviceKey.prefix(12))…")
        }
        // What the fakes answered the devices with lost pushes (a 410 retires a device, and its later pushes are lost).
        for key in Set(loss.lostExamples.map(\.deviceKey)).sorted() {
            let answers = Dictionary(grouping: attempts.filter { $0.deviceKey == key }, by: { $0.status.map(String.init) ?? "none" })
            log("answers to device \(key.prefix(12))…: " + answers.map { "\($0.key)×\($0.value.count)" }.sorted().joined(separator: " "))
        }
        if loss.clears > 0 { report.figure("read-sync clears accepted", "\(loss.clears)") }
        report.check("lost = 0", loss.lost == 0)
        report.check("unexpected = 0", loss.unexpected == 0)
        report.finish(loss: loss, seconds: (ContinuousClock.now - started).seconds)
        try await plan.verify?(context, attempts)
    }

    private func waitUntilServing(_ processes: [ServerProcess], dispatchers: [ServerProcess], api: APIClient, database: ChaosDatabase) async throws {
        let pids = dispatchers.map(\.pid)
        let serving = await database.eventually(timeout: .seconds(90)) {
            for process in processes where !process.isRunning {
                // The last lines first: the reason, where a table's cell can show it.
                let tail = process.log().split(separator: "\n").suffix(3).reversed().joined(separator: " ⟵ ")
                throw ChaosError("\(process.name) exited: \(tail.suffix(2000))")
            }
            guard await api.call(.GET, "/readyz").status == 200 else { return false }
            let alive = try await database.scalar(
                "SELECT count(DISTINCT pid) FROM securepush.dispatchers WHERE pid = ANY(\(pids)::int4[]) AND stopped_at IS NULL", as: Int64.self)
            return alive == Int64(dispatchers.count)
        }
        guard serving else {
            throw ChaosError("the SecurePush processes did not come up: \(processes.map { $0.name + ": " + String($0.log().suffix(1500)) })")
        }
    }

    private func registerDevices(api: APIClient, fakes: ProviderFakes, tokens: UserTokens) async throws -> [ChaosDevice] {
        var devices: [ChaosDevice] = []
        for index in 0..<options.users {
            let user = "chaos-user-\(index)"
            let token = tokens.token(for: user)
            for platform in plan.platforms {
                var (device, body) = ChaosDevice.make(user: user, platform: platform, fakes: fakes)
                device.credential = try await api.register(body, userToken: token)
                devices.append(device)
            }
        }
        return devices
    }
}

/// Prints progress to standard error.
func log(_ message: String) {
    FileHandle.standardError.write(Data("[chaos] \(message)\n".utf8))
}

/// A free TCP port on 127.0.0.1, below the ephemeral range (`LoopbackPort.free()`).
func freePort() throws -> Int {
    guard let port = LoopbackPort.free() else { throw ChaosError("no free port between 10000 and 32000") }
    return port
}

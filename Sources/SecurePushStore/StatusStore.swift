import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushPostgres
import SecurePushReports

/// Builds the `StatusReport` from the database.
public struct StatusStore: Sendable {
    let database: StoreDatabase
    /// A dispatcher whose heartbeat is older than this is `stale`; older than twice this, `stopped` (it
    /// could not record its stop, for example in a failover, or it died).
    let staleAfter: Duration
    /// When the report says "degraded".
    let thresholds: StatusThresholds

    /// Creates the store on an injected client.
    public init(client: any DatabaseClient, staleAfter: Duration, thresholds: StatusThresholds = StatusThresholds(), logger: Logger) {
        self.database = StoreDatabase(client: client, logger: logger)
        self.staleAfter = staleAfter
        self.thresholds = thresholds
    }

    /// Reads the whole report in one snapshot: one read-only, repeatable-read transaction on one connection, so its
    /// figures agree with each other (a delivery is counted once, as pending or in the last minute's outcomes).
    public func report(pendingMigrations: [String]) async throws -> StatusReport {
        var report = try await database.client.leased { [database, staleAfter, thresholds] connection in
            try await connection.inTransaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: database.logger) {
                let snapshot = StatusStore(
                    database: StoreDatabase(client: SingleConnectionClient(connection: connection), logger: database.logger),
                    staleAfter: staleAfter, thresholds: thresholds)
                return try await snapshot.read(pendingMigrations: pendingMigrations)
            }
        }
        report.health = thresholds.health(of: report)
        return report
    }

    private init(database: StoreDatabase, staleAfter: Duration, thresholds: StatusThresholds) {
        self.database = database
        self.staleAfter = staleAfter
        self.thresholds = thresholds
    }

    /// The report's statements, in whatever transaction `database` runs them.
    private func read(pendingMigrations: [String]) async throws -> StatusReport {
        let dispatchers = try await dispatchers()
        let (lastMinute, _) = try await outcomesByPlatform(seconds: 60)
        let (lastHour, outcomesLastHour) = try await outcomesByPlatform(seconds: 3600)
        return StatusReport(
            generatedAt: Date(),
            database: .init(reachable: true, migrationsPending: pendingMigrations),
            queue: try await queue(),
            notifications: try await notifications(),
            dispatchers: dispatchers,
            openCircuits: Self.openCircuits(of: dispatchers),
            lastMinute: lastMinute,
            lastHour: lastHour,
            outcomesLastHour: outcomesLastHour,
            fetchLastHour: try await fetchStats(window: .seconds(3600)),
            securityEventsLastHour: try await securityEvents(),
            feed: try await feed()
        )
    }

    /// How long the feed has held back its oldest committed event, the session whose transaction (the oldest
    /// still running: the snapshot's xmin) holds it, and where the webhook stands. `pg_locks` and the
    /// `pg_stat_activity` columns read here are visible to every login.
    private func feed() async throws -> StatusReport.Feed {
        let row = try await database.query(
            """
            WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
            held AS (
                SELECT f.at FROM securepush.delivery_feed f, horizon h
                WHERE f.xid >= h.xmin ORDER BY f.xid, f.position LIMIT 1
            )
            SELECT (SELECT extract(epoch FROM now() - held.at)::float8 FROM held),
                   a.pid, a.usename::text, a.application_name
            FROM horizon h
            LEFT JOIN pg_catalog.pg_locks l
                   ON l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
                  AND l.transactionid::text = (h.xmin::text::numeric % 4294967296)::text
            LEFT JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
            LIMIT 1
            """
        ).collect()[0]
        let (held, pid, role, application) = try row.decode((Double?, Int32?, String?, String?).self)
        var feed = StatusReport.Feed(heldSeconds: held)
        if held != nil, let pid { feed.heldBy = .init(pid: pid, role: role ?? "", application: application ?? "") }
        let webhook = try await database.query(
            """
            SELECT (SELECT extract(epoch FROM now() - e.at)::float8 FROM securepush.events_after(s.cursor, 1) e LIMIT 1),
                   s.failures, s.last_success_at
            FROM securepush.webhook_state s WHERE s.id = 1
            """
        ).collect().first
        if let (lag, failures, lastSuccess) = try webhook?.decode((Double?, Int32, Date?).self) {
            feed.webhook = .init(lagSeconds: lag, failures: failures, lastSuccessAt: lastSuccess)
        }
        return feed
    }

    private func queue() async throws -> StatusReport.Queue {
        var byPlatform: [StatusReport.PlatformQueue] = []
        let (pending, claimed, scheduled) = (DeliveryState.pending, DeliveryState.claimed, DeliveryState.scheduled)
        let rows = try await database.query(
            """
            SELECT platform, sum(pending)::bigint, sum(claimed)::bigint, sum(retrying)::bigint, sum(scheduled)::bigint
            FROM (
                SELECT platform,
                       count(*) FILTER (WHERE state = \(pending)) AS pending,
                       count(*) FILTER (WHERE state = \(claimed)) AS claimed,
                       count(*) FILTER (WHERE state = \(pending) AND run_at > now() AND attempts > 0) AS retrying,
                       count(*) FILTER (WHERE state = \(scheduled)) AS scheduled
                FROM securepush.deliveries GROUP BY platform
                UNION ALL
                -- Deliveries held as items of a claim's lease (migration 046) are claimed too.
                SELECT platform, 0, count(*), 0, 0 FROM securepush.claimed_items GROUP BY platform
            ) q
            GROUP BY platform ORDER BY platform
            """
        )
        for try await (platform, pending, claimed, retrying, scheduled) in rows.decode((String, Int64, Int64, Int64, Int64).self) {
            byPlatform.append(.init(platform: platform, pending: pending, claimed: claimed, retrying: retrying, scheduled: scheduled))
        }
        // The lag counts a committed notification that no dispatcher has fanned out yet from its commit (its
        // transaction's start: the nearest the row records).
        let lagRow = try await database.query(
            """
            SELECT extract(epoch FROM now() - least(
                       (SELECT min(run_at) FROM securepush.deliveries WHERE state = \(pending) AND run_at <= now()),
                       (SELECT min(n.created_at) FROM securepush.fan_out_queue q JOIN securepush.notifications n ON n.id = q.notification_id)
                   ))::float8,
                   (SELECT count(*) FROM securepush.fan_out_queue)::bigint
            """
        ).collect()[0]
        let (lag, awaitingFanOut) = try lagRow.decode((Double?, Int64).self)
        return .init(
            pending: byPlatform.reduce(0) { $0 + $1.pending },
            claimed: byPlatform.reduce(0) { $0 + $1.claimed },
            scheduled: byPlatform.reduce(0) { $0 + $1.scheduled },
            awaitingFanOut: awaitingFanOut,
            oldestPendingAgeSeconds: lag,
            byPlatform: byPlatform
        )
    }

    private func notifications() async throws -> StatusReport.Notifications {
        let row = try await database.query(
            """
            SELECT count(*)::bigint,
                   count(*) FILTER (WHERE read_at IS NULL AND purged_at IS NULL AND expires_at > now())::bigint,
                   count(*) FILTER (WHERE purged_at IS NOT NULL)::bigint,
                   (SELECT count(*) FROM securepush.notifications
                    WHERE deliver_at IS NOT NULL AND purged_at IS NULL AND deliver_at > now())::bigint
            FROM securepush.notifications
            """
        ).collect()[0]
        let (stored, unread, purged, scheduled) = try row.decode((Int64, Int64, Int64, Int64).self)
        return .init(stored: stored, unread: unread, purged: purged, scheduled: scheduled)
    }

    private func dispatchers() async throws -> [StatusReport.Dispatcher] {
        let staleMilliseconds = staleAfter.wholeMilliseconds
        let rows = try await database.query(
            """
            SELECT id, host, pid, role, version, started_at, last_seen_at,
                   CASE WHEN stopped_at IS NOT NULL THEN \(DispatcherState.stopped)
                        WHEN last_seen_at > now() - \(staleMilliseconds) * interval '1 millisecond' THEN \(DispatcherState.alive)
                        WHEN last_seen_at > now() - 2 * \(staleMilliseconds) * interval '1 millisecond' THEN \(DispatcherState.stale)
                        ELSE \(DispatcherState.stopped) END,
                   sent, failed, circuits::text, listener_connected, listener_heard_at, coalesce(platforms, '{}')
            FROM securepush.dispatchers
            WHERE coalesce(stopped_at, last_seen_at) > now() - interval '1 hour'
            ORDER BY started_at DESC
            """
        )
        var result: [StatusReport.Dispatcher] = []
        let decoder = CircuitSnapshot.decoder
        for try await (id, host, pid, role, version, started, seen, state, sent, failed, circuitsText, listenerUp, listenerHeard, platforms)
            in rows.decode((UUID, String, Int32, String, String, Date, Date, DispatcherState, Int64, Int64, String, Bool?, Date?, [String]).self)
        {
            // Written only by heartbeats; a row this build cannot read shows no circuits rather than failing the report.
            let circuits = (try? decoder.decode([CircuitSnapshot].self, from: Data(circuitsText.utf8))) ?? []
            result.append(
                .init(
                    id: id.uuidString.lowercased(), host: host, pid: pid, role: role, version: version, startedAt: started, lastHeartbeatAt: seen,
                    state: state, sent: sent, failed: failed, circuits: circuits, listenerConnected: listenerUp, listenerHeardAt: listenerHeard,
                    platforms: platforms
                )
            )
        }
        return result
    }

    /// Per platform, pushes accepted in the last `window` and how many their devices fetched, with the
    /// push-to-fetch latency's p50 and p99 (`securepush.fetch_stats`).
    public func fetchStats(window: Duration) async throws -> [StatusReport.PlatformFetch] {
        let milliseconds = window.wholeMilliseconds
        let rows = try await database.query(
            """
            SELECT * FROM securepush.fetch_stats(\(milliseconds) * interval '1 millisecond')
            """
        )
        var result: [StatusReport.PlatformFetch] = []
        for try await postgresRow in rows {
            let row = try FetchStatsRow(row: postgresRow)
            result.append(
                .init(
                    platform: row.platform, accepted: row.accepted, fetched: row.fetched, fetchRatio: row.fetchRatio,
                    pushToFetchP50Seconds: row.pushToFetchP50Seconds, pushToFetchP99Seconds: row.pushToFetchP99Seconds))
        }
        return result
    }

    /// The circuits of the alive dispatchers (a stale one's may be long over), most recently started first.
    static func openCircuits(of dispatchers: [StatusReport.Dispatcher]) -> [StatusReport.OpenCircuit] {
        dispatchers.filter { $0.state == .alive }.flatMap { dispatcher in
            dispatcher.circuits.map {
                StatusReport.OpenCircuit(platform: $0.platform, host: $0.host, state: $0.state, openUntil: $0.openUntil, dispatcher: dispatcher.id)
            }
        }
    }

    private func securityEvents() async throws -> [String: Int64] {
        var counts = Dictionary(uniqueKeysWithValues: AuditEvent.allCases.map { ($0.rawValue, Int64(0)) })
        let rows = try await database.query(
            "SELECT event, count(*)::bigint FROM securepush.audit_log WHERE at > now() - interval '1 hour' GROUP BY event")
        for try await (event, count) in rows.decode((String, Int64).self) {
            counts[event] = count
        }
        return counts
    }

    /// The deliveries that finished in the last `seconds`, by outcome: in all and per platform (with how many took
    /// more than one attempt). One range scan of `delivery_log_finished_idx` (a sequential scan when most of the
    /// history is that recent), read by column name.
    private func outcomesByPlatform(seconds: Int) async throws -> (StatusReport.Window, [StatusReport.PlatformOutcomes]) {
        let rows = try await database.query(
            """
            SELECT platform, outcome, count(*)::bigint AS finished, count(*) FILTER (WHERE attempts > 1)::bigint AS retried
            FROM securepush.delivery_log
            WHERE finished_at > now() - \(seconds) * interval '1 second'
            GROUP BY platform, outcome
            ORDER BY platform, outcome
            """
        )
        var total = StatusReport.Window()
        var platforms: [(platform: String, outcomes: StatusReport.Window, retried: Int64)] = []
        for try await postgresRow in rows {
            let row = NamedRow(postgresRow)
            let (platform, outcome): (String, String) = (try row("platform"), try row("outcome"))
            let (finished, retried): (Int64, Int64) = (try row("finished"), try row("retried"))
            if platforms.last?.platform != platform { platforms.append((platform, StatusReport.Window(), 0)) }
            platforms[platforms.count - 1].outcomes.add(outcome, finished)
            platforms[platforms.count - 1].retried += retried
            total.add(outcome, finished)
        }
        return (total, platforms.map { StatusReport.PlatformOutcomes(platform: $0.platform, outcomes: $0.outcomes, retried: $0.retried) })
    }
}

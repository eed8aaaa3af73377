import Foundation
import NIOConcurrencyHelpers
import PostgresNIO

/// A producer inserting notifications with plain SQL at a steady rate, on one connection of its own,
/// keeping a ledger: an id is recorded as committed only after its COMMIT succeeded. A statement that
/// failed has an unknown outcome (the connection may have died after the commit): its id is kept as
/// uncertain and looked up in the database afterwards. Ids are made here, so an uncertain insert can be found.
final class Producer: Sendable {
    /// What the producer did.
    struct Ledger: Sendable {
        /// Committed notification id → recipient.
        var committed: [UUID: String] = [:]
        /// Inserts whose outcome is unknown: id → recipient.
        var uncertain: [UUID: String] = [:]
        /// Connection attempts that failed (no insert was tried).
        var connectFailures = 0
        /// When each commit returned, in order.
        var commitTimes: [Date] = []
    }

    let database: ChaosDatabase
    let users: [String]
    let rate: Double
    /// How long one insert (its commit included) may take before its outcome counts as unknown and the
    /// connection is dropped: a frozen or cut-off server never answers, and the producer must go on.
    let statementDeadline: Duration
    private let ledger = NIOLockedValueBox(Ledger())
    private let backendPID = NIOLockedValueBox<Int32?>(nil)

    init(database: ChaosDatabase, users: [String], rate: Double, statementDeadline: Duration = .seconds(5)) {
        self.database = database
        self.users = users
        self.rate = rate
        self.statementDeadline = statementDeadline
    }

    /// The ledger so far.
    var snapshot: Ledger { ledger.withLockedValue { $0 } }
    /// The backend process id of the producer's connection (so connection hogs can spare it).
    var pid: Int32? { backendPID.withLockedValue { $0 } }

    /// Inserts at `rate` per second until cancelled; reconnects with a short backoff while the database is away.
    func run() async {
        let interval = Duration.seconds(1 / rate)
        let clock = ContinuousClock()
        var next = clock.now
        var connection: PostgresConnection?
        var sequence = 0
        while !Task.isCancelled {
            next += interval
            if next < clock.now - .seconds(1) { next = clock.now }  // no burst to catch up after an outage
            try? await Task.sleep(until: next, clock: clock)
            if Task.isCancelled { break }
            if connection == nil || connection?.isClosed == true {
                do {
                    let opened = try await database.connect(timeout: .seconds(2))
                    let logger = database.logger
                    let pid: Int32?
                    do {
                        pid = try await withDeadline(statementDeadline) {
                            try await opened.query("SELECT pg_backend_pid()", logger: logger).collect().first?.decode(Int32.self)
                        }
                    } catch {
                        Task { try? await opened.close() }
                        throw error
                    }
                    backendPID.withLockedValue { $0 = pid }
                    connection = opened
                } catch {
                    ledger.withLockedValue { $0.connectFailures += 1 }
                    try? await Task.sleep(for: .milliseconds(200))
                    continue
                }
            }
            guard let open = connection else { continue }
            let id = UUID()
            let user = users[sequence % users.count]
            sequence += 1
            let payload = #"{"chaos":\#(sequence),"text":"secret balance 1234.56"}"#
            let logger = database.logger
            do {
                _ = try await withDeadline(statementDeadline) {
                    try await open.query(
                        "INSERT INTO securepush.notifications (id, user_id, payload) VALUES (\(id), \(user), \(payload)::jsonb)",
                        logger: logger
                    ).collect()
                }
                ledger.withLockedValue {
                    $0.committed[id] = user
                    $0.commitTimes.append(Date())
                }
            } catch {
                // Even an error from the server can follow a commit (a backend told to quit after writing
                // it, a commit cut off while it waited for a synchronous standby): the outcome is unknown until
                // the id is looked up. Closing does not wait: the server may never answer.
                ledger.withLockedValue { $0.uncertain[id] = user }
                Task { try? await open.close() }
                connection = nil
            }
        }
        try? await connection?.close()
    }

    /// Inserts `count` notifications in one statement (one transaction), recorded after it committed.
    func burst(_ count: Int) async throws {
        let ids = (0..<count).map { _ in UUID() }
        let recipients = (0..<count).map { users[$0 % users.count] }
        do {
            try await database.execute(
                """
                INSERT INTO securepush.notifications (id, user_id, payload)
                SELECT id, user_id, jsonb_build_object('burst', true) FROM unnest(\(ids)::uuid[], \(recipients)::text[]) AS b(id, user_id)
                """)
        } catch {
            ledger.withLockedValue { ledger in
                for (id, user) in zip(ids, recipients) { ledger.uncertain[id] = user }
            }
            throw error
        }
        ledger.withLockedValue { ledger in
            for (id, user) in zip(ids, recipients) { ledger.committed[id] = user }
        }
    }

    /// Looks the uncertain inserts up: those in the database are moved to the committed set.
    /// Returns how many were found committed.
    func resolveUncertain() async throws -> Int {
        let uncertain = snapshot.uncertain
        guard !uncertain.isEmpty else { return 0 }
        let ids = Array(uncertain.keys)
        let found = try await database.with { connection in
            var found: [UUID] = []
            let rows = try await connection.query("SELECT id FROM securepush.notifications WHERE id = ANY(\(ids)::uuid[])", logger: database.logger)
            for try await id in rows.decode(UUID.self) { found.append(id) }
            return found
        }
        ledger.withLockedValue { ledger in
            for id in found {
                if let user = ledger.uncertain.removeValue(forKey: id) { ledger.committed[id] = user }
            }
        }
        return found.count
    }
}

import Foundation
import PostgresNIO

/// Other clients taking every connection slot of the cluster (`max_connections`): opens connections until
/// the server refuses more, ends the sessions of everyone else except `spared` (their pools then need new
/// connections, which are refused), and keeps it that way, taking every slot that frees up.
struct ConnectionHog {
    /// What the hog did.
    struct Outcome: Sendable {
        var held = 0
        var sessionsEnded = 0
    }

    let database: ChaosDatabase

    /// Holds the slots for `duration`, then closes its connections.
    func exhaust(for duration: Duration, spared: [Int32]) async throws -> Outcome {
        var outcome = Outcome()
        var connections: [PostgresConnection] = []
        var ours: [Int32] = []
        func fill() async {
            while connections.count < 1000, let connection = try? await database.connect(timeout: .seconds(2)) {
                connections.append(connection)
                if let pid = try? await connection.query("SELECT pg_backend_pid()", logger: database.logger).collect().first?.decode(Int32.self) {
                    ours.append(pid)
                }
            }
        }
        do {
            await fill()
            guard let admin = connections.first else { throw ChaosError("the hog could not open a single connection") }
            let deadline = ContinuousClock.now + duration
            while ContinuousClock.now < deadline {
                let keep = ours + spared
                let ended =
                    try await admin.query(
                        """
                        SELECT count(*) FROM (
                            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                            WHERE backend_type = 'client backend' AND datname = current_database() AND pid <> ALL(\(keep)::int4[])
                        ) ended
                        """, logger: database.logger
                    ).collect().first?.decode(Int64.self) ?? 0
                outcome.sessionsEnded += Int(ended)
                await fill()
                try await Task.sleep(for: .milliseconds(20))
            }
        } catch {
            for connection in connections { try? await connection.close() }
            throw error
        }
        outcome.held = connections.count
        for connection in connections { try? await connection.close() }
        return outcome
    }
}

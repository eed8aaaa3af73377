import AsyncHTTPClient
import Foundation
import Logging
import PostgresNIO
import SecurePushCore
import SecurePushDispatcher
import SecurePushProviders
import SecurePushServer
import SecurePushTestSupport
import Testing

/// What the dispatcher must have done with one device's delivery.
enum Expected: Sendable, CustomStringConvertible {
    case sent
    case tokenInvalid
    case failed
    /// Back to pending after one attempt, to run again no sooner than `atLeast` and no later than `atMost` seconds.
    case retry(atLeast: Double, atMost: Double)

    var description: String {
        switch self {
        case .sent: "sent"
        case .tokenInvalid: "token invalid"
        case .failed: "failed"
        case .retry(let low, let high): "retry in \(Int(low))–\(Int(high)) s"
        }
    }
}

/// Dispatcher settings for platform tests: the first retry comes after 60 s ± 10 %, so it can be measured.
let platformTestConfiguration: DispatcherConfiguration = {
    var configuration = DispatcherConfiguration.testing
    configuration.retry = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(60), maxDelay: .seconds(600), jitter: 0.1)
    return configuration
}()

/// Runs a dispatcher whose providers are built from `settings` exactly as `securepush serve` builds them.
func withPlatformDispatcher(
    _ db: TestDatabase,
    platforms: String,
    settings: [String: String],
    dispatcher: DispatcherConfiguration = platformTestConfiguration,
    logs: CapturedLogs? = nil,
    _ body: @Sendable (DispatcherHarness) async throws -> Void
) async throws {
    var environment = settings
    environment["DATABASE_URL"] = db.url.urlString
    environment["SECUREPUSH_PROVIDERS"] = platforms
    let configuration = try SecurePushConfiguration(environment: environment)
    let httpClient = ProviderFactory.makeHTTPClient()
    let pinnedClients = ProviderFactory.makePinnedClients()
    do {
        let providers = try ProviderFactory.makeProviders(configuration, httpClient: httpClient, pinnedClients: pinnedClients, logger: db.logger)
        let harness = try DispatcherHarness(
            database: db,
            configuration: dispatcher,
            extraProviders: providers.filter { $0.platform != .simulated },
            logs: logs
        )
        do {
            try await body(harness)
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    } catch {
        await pinnedClients.shutdown()
        try? await httpClient.shutdown()
        throw error
    }
    await pinnedClients.shutdown()
    try await httpClient.shutdown()
}

/// Waits until every listed device's delivery reached its expected state, then checks each one.
func expectOutcomes(_ db: TestDatabase, _ rows: [(device: UUID, expected: Expected, label: String)]) async throws {
    let devices = rows.map(\.device)
    try await db.eventually("every delivery reached an outcome", timeout: .seconds(30)) {
        let settled: Int64 = try await db.scalar(
            """
            SELECT (SELECT count(*) FROM securepush.delivery_log WHERE device_id = ANY(\(devices)::uuid[]))
                 + (SELECT count(*) FROM securepush.deliveries WHERE device_id = ANY(\(devices)::uuid[]) AND state = 'pending' AND attempts >= 1)
            """
        )
        return settled >= Int64(rows.count)
    }
    for row in rows {
        let logged = try await db.client.query(
            "SELECT outcome, attempts FROM securepush.delivery_log WHERE device_id = \(row.device)", logger: db.logger
        ).collect()
        let active: Bool = try await db.scalar("SELECT active FROM securepush.devices WHERE id = \(row.device)")
        switch row.expected {
        case .sent, .failed, .tokenInvalid:
            let wanted = row.expected.outcome
            let outcome = try logged.first?.decode((String, Int32).self)
            #expect(outcome?.0 == wanted, "\(row.label): expected \(row.expected), got \(String(describing: outcome))")
            #expect(outcome?.1 == 1, "\(row.label): one attempt, not retried")
            if case .tokenInvalid = row.expected {
                #expect(!active, "\(row.label): the device is deactivated")
            } else {
                #expect(active, "\(row.label): the device stays active")
            }
        case .retry(let low, let high):
            #expect(logged.isEmpty, "\(row.label): not finished")
            // Measured from the attempt (the claim), not from now: the check may run seconds later.
            let delay: Double = try await db.scalar(
                "SELECT extract(epoch FROM run_at - claimed_at)::float8 FROM securepush.deliveries WHERE device_id = \(row.device)")
            #expect(delay >= low - 0.5 && delay <= high + 5, "\(row.label): retry in \(delay) s")
            #expect(active, "\(row.label): the device stays active")
        }
    }
}

extension Expected {
    var outcome: String {
        switch self {
        case .sent: "sent"
        case .tokenInvalid: "token_invalid"
        case .failed: "failed"
        case .retry: "retry"
        }
    }
}

import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// What a row's disruption works with while the load runs.
struct ChaosContext: Sendable {
    let options: ChaosOptions
    let plan: RowPlan
    let fakes: ProviderFakes
    let database: ChaosDatabase
    /// `p1` (`--role all`: API and dispatcher) and `p2` (`--role dispatcher`); with the plan's
    /// `.apiAndTwoDispatchers` layout `p1` is `--role api` and `p2`, `p3` are dispatchers.
    let processes: [ServerProcess]
    /// The API of `p1`.
    let api: APIClient
    let devices: [ChaosDevice]
    let producer: Producer
    let report: RowReport
    /// The relays the processes push through (the failover matrix's `relay` route), else `nil`.
    let relay: RelayPair?

    /// Sleeps (a row's phases are durations of load, not conditions to wait for).
    func hold(_ duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }

    /// Probes `/readyz` and an authenticated device read (`GET /v1/notifications?unread=true&limit=1`)
    /// every 250 ms while `body` runs.
    func probingAPI<T: Sendable>(_ body: (APIProbe, APIProbe) async throws -> T) async throws -> T {
        let api = self.api
        let credential = devices[0].credential
        let ready = APIProbe(name: "readyz") { await api.call(.GET, "/readyz") }
        let read = APIProbe(name: "device read") { await api.call(.GET, "/v1/notifications?unread=true&limit=1", bearer: credential) }
        let readyTask = Task { await ready.run(every: .milliseconds(250)) }
        let readTask = Task { await read.run(every: .milliseconds(250)) }
        let result: Result<T, any Error>
        do { result = .success(try await body(ready, read)) } catch { result = .failure(error) }
        ready.stop()
        read.stop()
        await readyTask.value
        await readTask.value
        return try result.get()
    }

    /// Waits until `/readyz` answers 200; returns the seconds it took, or `nil` at the deadline.
    func waitReady(timeout: Duration = .seconds(60)) async -> Double? {
        let start = ContinuousClock.now
        while ContinuousClock.now - start < timeout {
            if await api.call(.GET, "/readyz").status == 200 { return (ContinuousClock.now - start).seconds }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// The log lines of `process` containing `text`.
    func logLines(_ process: ServerProcess, containing text: String) -> [Substring] {
        process.log().split(separator: "\n").filter { $0.contains(text) }
    }
}

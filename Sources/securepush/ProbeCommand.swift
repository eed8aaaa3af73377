import ArgumentParser
import Foundation
import SecurePushServer
import SecurePushStore

struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Push a probe notification to a user's devices and report, per device, when it was accepted and fetched.",
        discussion: """
            The probe's payload is {"securepush_probe": true, "title": "SecurePush probe", ...}, so apps can \
            show or hide it. Exits non-zero when no device's push was accepted (or the user has no active device).
            """
    )

    static let defaultTimeout: Duration = .seconds(30)

    @OptionGroup var common: CommonOptions

    @Option(help: "The user id whose devices get the probe.")
    var user: String

    @Option(help: "How long to wait for the pushes to be accepted and fetched, e.g. 10s (default 30s; also the probe's TTL).")
    var timeout: DurationArgument?

    func validate() throws {
        guard (1...256).contains(user.count) else { throw ValidationError("--user must be 1 to 256 characters") }
        let timeout = self.timeout?.duration ?? Self.defaultTimeout
        guard timeout >= .milliseconds(100), timeout <= .seconds(3600) else {
            throw ValidationError("--timeout must be between 100ms and 1h")
        }
    }

    func run() async throws {
        let (configuration, logger) = try common.loadDatabase()
        let timeout = self.timeout?.duration ?? Self.defaultTimeout
        let user = self.user
        let report = try await DatabaseSession.withClient(configuration, logger: logger) { client in
            try await Probe(store: ProbeStore(client: client, logger: logger), timeout: timeout).run(userID: user) { id in
                // At once, so the id can be fetched (or traced) while the probe waits.
                FileHandle.standardOutput.write(Data("probe \(id) enqueued for \(user); waiting up to \(timeout) for its pushes and fetches\n".utf8))
            }
        }
        print(ProbeTable(report: report, timeout: timeout).render())
        guard report.anyAccepted else { throw ExitCode(1) }
    }
}

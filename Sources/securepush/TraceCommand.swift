import ArgumentParser
import Foundation
import SecurePushAPI
import SecurePushReports
import SecurePushServer
import SecurePushStore

struct TraceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Explain one notification's fate (or one device's recent history) from the database, for a support ticket.",
        discussion: "The same timeline as GET /support/notifications/{id} on the operations listener. Never a payload or a preview."
    )

    @OptionGroup var common: CommonOptions

    @Argument(help: "The notification id (or, with --device, the device id).")
    var id: String

    @Flag(help: "The id is a device's: its last pushes, fetches and refusals.")
    var device = false

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func run() async throws {
        guard let uuid = UUID(uuidString: id) else { throw ValidationError("\(id) is not a UUID") }
        let (configuration, logger) = try common.loadDatabase()
        let device = self.device
        let (lines, encoded) = try await DatabaseSession.withClient(configuration, logger: logger) { client -> ([String], Data) in
            let store = SupportStore(client: client, logger: logger)
            if device {
                let timeline = try await store.device(uuid)
                return (timeline.explanation, try StatusReport.jsonEncoder.encode(timeline))
            }
            let timeline = try await store.notification(uuid)
            return (timeline.explanation, try StatusReport.jsonEncoder.encode(timeline))
        }
        if json {
            print(String(decoding: encoded, as: UTF8.self))
        } else {
            print((device ? "device " : "notification ") + uuid.uuidString.lowercased())
            for line in lines { print("  - " + line) }
        }
    }
}

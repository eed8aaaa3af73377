import ArgumentParser
import Foundation
import SecurePushPostgres
import SecurePushRelay
import SecurePushRelayProtocol
import SecurePushServer
import SecurePushStore

/// `securepush relay ...`: the relay operator's commands, on the relay's own database (DATABASE_URL).
struct RelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Operate a push relay (docs/relay.md): its database and its installations.",
        subcommands: [RelayMigrateCommand.self, InstallationCommand.self]
    )
}

struct RelayMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply the relay's migrations (sql/relay/) to DATABASE_URL.")

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let (configuration, logger) = try common.loadDatabase()
        let migrator = try RelayMigrations.migrator()
        let applied = try await StartupWait(limit: configuration.startupWait).withDatabase(configuration, logger: logger) { client in
            try await migrator.migrate(client: client, logger: logger)
        }
        print(MigrationSummary.line("securepush relay", applied: applied, known: migrator.migrations.count))
    }
}

/// A quota flag: a positive number, or `none` to remove the quota.
struct QuotaArgument: ExpressibleByArgument {
    let value: Int?

    init?(argument: String) {
        if argument == "none" {
            value = nil
        } else if let number = Int(argument), number > 0, number <= Int(Int32.max) {
            value = number
        } else {
            return nil
        }
    }
}

struct QuotaOptions: ParsableArguments {
    @Option(name: .customLong("pushes-per-minute"), help: "Pushes per minute, or none.")
    var pushesPerMinute: QuotaArgument?
    @Option(name: .customLong("pushes-per-day"), help: "Pushes per day, or none.")
    var pushesPerDay: QuotaArgument?
    @Option(
        name: .customLong("max-tokens"),
        help: "Registered tokens at most, or none (a new installation: \(InstallationCommand.Add.defaultMaxTokens) unless given).")
    var maxTokens: QuotaArgument?

    var quotas: RelayStore.Quotas {
        RelayStore.Quotas(pushesPerMinute: pushesPerMinute.map(\.value), pushesPerDay: pushesPerDay.map(\.value), maxTokens: maxTokens.map(\.value))
    }
}

struct InstallationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "installation",
        abstract: "Add, list, disable, enable, re-key, limit and set the policy of the installations (self-hosted servers).",
        subcommands: [Add.self, List.self, Disable.self, Enable.self, RotateKey.self, SetQuota.self, SetPolicy.self])

    /// Runs `body` with the relay's store on DATABASE_URL.
    static func withStore<T: Sendable>(_ common: CommonOptions, _ body: @escaping @Sendable (RelayStore) async throws -> T) async throws -> T {
        let (configuration, logger) = try common.loadDatabase()
        return try await DatabaseSession.withClient(configuration, logger: logger) { client in
            try await body(RelayStore(client: client, logger: logger))
        }
    }

    static func find(_ store: RelayStore, _ reference: String) async throws -> UUID {
        guard let id = try await store.find(reference) else { throw ValidationError("no installation \(reference)") }
        return id
    }

    static func printKey(id: UUID, key: InstallationKey) {
        for line in InstallationCredentials(id: id, key: key).lines { print(line) }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an installation; prints its id and key once.")
        @OptionGroup var common: CommonOptions
        @Option(help: "A unique name (1 to 100 characters).") var name: String
        @OptionGroup var quota: QuotaOptions

        /// A new installation's token cap when `--max-tokens` is not given (issue 48: without one, an installation
        /// bound 30,000 tokens in 0.9 s); `--max-tokens none` lifts it.
        static let defaultMaxTokens = 100_000

        func run() async throws {
            guard (1...100).contains(name.count) else { throw ValidationError("--name must be 1 to 100 characters") }
            let key = InstallationKey()
            var chosen = quota.quotas
            if quota.maxTokens == nil { chosen.maxTokens = .some(Self.defaultMaxTokens) }
            let (name, quotas) = (self.name, chosen)
            let id = try await InstallationCommand.withStore(common) { store in
                if try await store.find(name) != nil { throw ValidationError("an installation named \(name) exists") }
                return try await store.add(name: name, publicKey: key.publicKey, quotas: quotas)
            }
            InstallationCommand.printKey(id: id, key: key)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the installations with their quotas and counts.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let installations = try await InstallationCommand.withStore(common) { try await $0.installations() }
            func quota(_ value: Int?) -> String { value.map(String.init) ?? "-" }
            print(
                ["id", "name", "state", "key", "per_minute", "per_day", "max_tokens", "tokens", "pushes_1h", "pushes_24h", "critical"].joined(
                    separator: "\t"))
            for i in installations {
                print(
                    [
                        i.id.uuidString.lowercased(), i.name, i.disabled ? "disabled" : "enabled", "v\(i.keyVersion)", quota(i.pushesPerMinute),
                        quota(i.pushesPerDay), quota(i.maxTokens), "\(i.tokens)", "\(i.pushesLastHour)", "\(i.pushesLastDay)",
                        i.criticalAllowed ? "on" : "off",
                    ].joined(separator: "\t"))
            }
        }
    }

    /// Disables (or enables) the installation `reference` names, and says so.
    static func setDisabled(_ common: CommonOptions, _ reference: String, _ disabled: Bool) async throws {
        _ = try await withStore(common) { store in try await store.setDisabled(try await find(store, reference), disabled) }
        print("\(disabled ? "disabled" : "enabled") \(reference)")
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an installation: its requests are refused (403) until enabled.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The installation's id or name.") var installation: String

        func run() async throws { try await InstallationCommand.setDisabled(common, installation, true) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled installation.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The installation's id or name.") var installation: String

        func run() async throws { try await InstallationCommand.setDisabled(common, installation, false) }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key", abstract: "Give an installation a new key (the old one stops working at once); prints it once.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The installation's id or name.") var installation: String

        func run() async throws {
            let key = InstallationKey()
            let reference = installation
            let id = try await InstallationCommand.withStore(common) { store in
                let id = try await InstallationCommand.find(store, reference)
                _ = try await store.rotateKey(id, publicKey: key.publicKey)
                return id
            }
            InstallationCommand.printKey(id: id, key: key)
        }
    }

    struct SetQuota: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set-quota", abstract: "Change an installation's quotas (none removes one).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The installation's id or name.") var installation: String
        @OptionGroup var quota: QuotaOptions

        func run() async throws {
            let (reference, quotas) = (installation, quota.quotas)
            _ = try await InstallationCommand.withStore(common) { store in
                try await store.setQuotas(try await InstallationCommand.find(store, reference), quotas)
            }
            print("quotas set for \(reference)")
        }
    }

    /// `on` or `off`.
    struct Switch: ExpressibleByArgument {
        let value: Bool

        init?(argument: String) {
            switch argument {
            case "on": value = true
            case "off": value = false
            default: return nil
            }
        }
    }

    struct SetPolicy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-policy", abstract: "Change what an installation may send (every relay process applies it from its next request).")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The installation's id or name.") var installation: String
        @Option(help: "Whether its pushes may have urgency critical (on or off; off for a new installation).") var critical: Switch

        func run() async throws {
            let (reference, allowed) = (installation, critical.value)
            _ = try await InstallationCommand.withStore(common) { store in
                try await store.setPolicy(try await InstallationCommand.find(store, reference), criticalAllowed: allowed)
            }
            print("policy set for \(reference): critical \(allowed ? "on" : "off")")
        }
    }
}

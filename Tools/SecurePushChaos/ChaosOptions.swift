import Foundation

/// The command line of `securepush-chaos` (run by `ops/chaos`, one row per invocation).
struct ChaosOptions: Sendable {
    /// Which row to run.
    var row: ChaosRow
    /// The `securepush` executable under test.
    var binary: String
    /// The (empty) database this row owns; it is migrated by the row.
    var databaseURL: String
    /// A script taking `stop` (immediate) or `start` for the PostgreSQL cluster (the restart row needs it).
    var postgresControl: String?
    /// Where process logs go.
    var workDirectory: String
    /// Shorter durations (the run `ops/test` makes).
    var quick = false
    /// How long the provider storm lasts.
    var stormSeconds: Double = 60
    /// How long PostgreSQL is down (pg-restart) or its slots taken (conn-exhaustion).
    var outageSeconds: Double = 5
    /// Notifications the producer commits per second.
    var rate: Double = 20
    /// Users (each with one device per platform of the row).
    var users = 10
    /// The failover rows: the HA cluster's folder (`ops/failover.d/cluster.sh start DIR`).
    var clusterDirectory: String?
    /// The failover rows: the cluster library (`ops/failover.d/cluster.sh`), run with a subcommand.
    var clusterScript: String?
    /// The failover rows: how the processes reach the cluster (`multi-host`, `haproxy`), for the table.
    var route = "-"
    /// The failover rows: how long the primary stays frozen (failover-freeze) or cut off (failover-drop).
    var faultSeconds: Double = 40
    /// The failover rows' `relay` route: the relay's (empty) database, as its owner. When given, the SecurePush
    /// processes push through two relay processes behind HAProxy (`RelayPair`) instead of to the fakes.
    var relayDatabaseURL: String?

    static let usage = """
        usage: securepush-chaos --row sigstop|pg-restart|conn-exhaustion|long-transaction|provider-storm
                                --binary PATH --database-url URL --work-dir DIR
                                [--pg-control SCRIPT] [--quick] [--storm-seconds N] [--outage-seconds N] [--rate N] [--users N]
               securepush-chaos --row failover-switchover|failover-kill|failover-freeze|failover-drop
                                --binary PATH --database-url URL --work-dir DIR --cluster-dir DIR --cluster-script PATH
                                [--route NAME] [--relay-database-url URL] [--fault-seconds N] [--quick] [--rate N] [--users N]
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws -> ChaosOptions {
        var values: [String: String] = [:]
        var quick = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--quick" {
                quick = true
                index += 1
                continue
            }
            guard argument.hasPrefix("--"), index + 1 < arguments.count else { throw ChaosError("unexpected argument \(argument)\n\(usage)") }
            values[String(argument.dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        func required(_ name: String) throws -> String {
            guard let value = values.removeValue(forKey: name) else { throw ChaosError("--\(name) is required\n\(usage)") }
            return value
        }
        guard let row = ChaosRow(rawValue: try required("row")) else { throw ChaosError("unknown row\n\(usage)") }
        var options = ChaosOptions(
            row: row, binary: try required("binary"), databaseURL: try required("database-url"),
            postgresControl: values.removeValue(forKey: "pg-control"), workDirectory: try required("work-dir"))
        options.quick = quick
        if let text = values.removeValue(forKey: "storm-seconds") {
            guard let seconds = Double(text), seconds >= 3 else { throw ChaosError("--storm-seconds must be a number of seconds >= 3") }
            options.stormSeconds = seconds
        }
        if let text = values.removeValue(forKey: "outage-seconds") {
            guard let seconds = Double(text), seconds >= 1, seconds <= 120 else { throw ChaosError("--outage-seconds must be between 1 and 120") }
            options.outageSeconds = seconds
        }
        if let text = values.removeValue(forKey: "rate") {
            guard let rate = Double(text), rate > 0, rate <= 1000 else { throw ChaosError("--rate must be between 0 and 1000 per second") }
            options.rate = rate
        }
        if let text = values.removeValue(forKey: "users") {
            guard let users = Int(text), (1...1000).contains(users) else { throw ChaosError("--users must be between 1 and 1000") }
            options.users = users
        }
        options.clusterDirectory = values.removeValue(forKey: "cluster-dir")
        options.clusterScript = values.removeValue(forKey: "cluster-script")
        if let route = values.removeValue(forKey: "route") { options.route = route }
        options.relayDatabaseURL = values.removeValue(forKey: "relay-database-url")
        if let text = values.removeValue(forKey: "fault-seconds") {
            guard let seconds = Double(text), seconds >= 1, seconds <= 300 else { throw ChaosError("--fault-seconds must be between 1 and 300") }
            options.faultSeconds = seconds
        }
        if row.isFailover, options.clusterDirectory == nil || options.clusterScript == nil {
            throw ChaosError("the failover rows need --cluster-dir and --cluster-script\n\(usage)")
        }
        if let unknown = values.keys.sorted().first { throw ChaosError("unknown option --\(unknown)\n\(usage)") }
        return options
    }
}

/// The rows of the failure matrix.
enum ChaosRow: String, Sendable, CaseIterable {
    case sigstop
    case pgRestart = "pg-restart"
    case connectionExhaustion = "conn-exhaustion"
    case longTransaction = "long-transaction"
    case providerStorm = "provider-storm"
    case failoverSwitchover = "failover-switchover"
    case failoverKill = "failover-kill"
    case failoverFreeze = "failover-freeze"
    case failoverDrop = "failover-drop"

    /// A row of `ops/failover` (an HA cluster and a fault injected into its primary).
    var isFailover: Bool { rawValue.hasPrefix("failover-") }
}

/// A failure of the chaos driver itself (not of a row's checks).
struct ChaosError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

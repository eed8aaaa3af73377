import Foundation

// `securepush-chaos`: runs one row of the failure matrix (see ops/chaos) and prints its markdown table row.
// Exit status: 0 when every check passed, 1 when one failed, 2 when the row could not run.

let options: ChaosOptions
do {
    options = try ChaosOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}

let plan: RowPlan =
    switch options.row {
    case .sigstop: SigstopRow.plan(options)
    case .pgRestart: PostgresRestartRow.plan(options)
    case .connectionExhaustion: ConnectionExhaustionRow.plan(options)
    case .longTransaction: LongTransactionRow.plan(options)
    case .providerStorm: ProviderStormRow.plan(options)
    case .failoverSwitchover, .failoverKill, .failoverFreeze, .failoverDrop: FailoverRow.plan(options)
    }

do {
    let report = try await ChaosRun(options: options, plan: plan).run()
    print(report.markdownRow)
    if options.row.isFailover {
        for (name, value) in report.figures { log("\(name): \(value)") }
    }
    for failure in report.failures { log("check failed: \(failure)") }
    exit(report.failures.isEmpty ? 0 : 1)
} catch {
    log("\(options.row.rawValue) could not run: \(error)")
    let reason = String(describing: error).prefix(options.row.isFailover ? 400 : 300).replacingOccurrences(of: "|", with: "/").replacingOccurrences(
        of: "\n", with: " ")
    if options.row.isFailover {
        print(FailoverRow.couldNotRun(options, reason: reason))
    } else {
        print("| \(options.row.rawValue) | – | – | – | – | – | – | – | FAILED: could not run | \(reason) |")
    }
    exit(2)
}

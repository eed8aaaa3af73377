/// What one row runs: which platforms its devices use, the settings its processes get, and the
/// disruption made while the producer runs (after `warmUp`, followed by `tail` of undisturbed load).
struct RowPlan: Sendable {
    /// Which `securepush serve` processes the row runs.
    enum Layout: Sendable {
        /// `p1` with the API and a dispatcher (`--role all`), `p2` a dispatcher.
        case allAndDispatcher
        /// `p1` the API alone (`--role api`), `p2` and `p3` dispatchers.
        case apiAndTwoDispatchers

        var processes: Int { self == .allAndDispatcher ? 2 : 3 }
        var firstRole: String { self == .allAndDispatcher ? "all" : "api" }
    }

    var layout: Layout = .allAndDispatcher
    var platforms: [ChaosPlatform] = ChaosPlatform.allCases
    /// Settings for both SecurePush processes, over `ChaosRun.baseEnvironment`.
    var environment: [String: String] = [:]
    var warmUp: Duration = .seconds(2)
    var tail: Duration = .seconds(2)
    /// How long one producer insert may take before its outcome counts as unknown (and its connection is dropped).
    var statementDeadline: Duration = .seconds(30)
    /// How long the queue may take to empty once the producer stopped.
    var drainTimeout: Duration = .seconds(120)
    /// The row's disruption and measurements.
    var disrupt: @Sendable (ChaosContext) async throws -> Void
    /// The row's own checks on every push the fakes received, once the queue drained and the processes stopped.
    var verify: (@Sendable (ChaosContext, [PushAttempt]) async throws -> Void)?
}

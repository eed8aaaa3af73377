/// What one row runs: which platforms its devices use, the settings its processes get, and the
/// disruption made while the producer runs (after `warmUp`, followed by `tail` of undisturbed load).
struct RowPlan: Sendable {
    var platforms: [ChaosPlatform] = ChaosPlatform.allCases
    /// Settings for both SecurePush processes, over `ChaosRun.baseEnvironment`.
    var environment: [String: String] = [:]
    var warmUp: Duration = .seconds(2)
    var tail: Duration = .seconds(2)
    /// How long the queue may take to empty once the producer stopped.
    var drainTimeout: Duration = .seconds(120)
    /// The row's disruption and measurements.
    var disrupt: @Sendable (ChaosContext) async throws -> Void
    /// The row's own checks on every push the fakes received, once the queue drained and the processes stopped.
    var verify: (@Sendable (ChaosContext, [PushAttempt]) async throws -> Void)?
}

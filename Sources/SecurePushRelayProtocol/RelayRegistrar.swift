/// The seam to the push relay's registrations (`POST /v1/relay/tokens`): the relay client in production.
public protocol RelayRegistrar: Sendable {
    /// Hands registration changes to the relay; throws when it did not take them.
    func changeTokens(_ changes: RelayTokenChanges) async throws
}

/// One registration change queued for a push relay (`securepush.relay_outbox`): a token to bind to this
/// installation or to release.
public struct RelayRegistrationChange: Sendable, Hashable {
    /// What a change asks of the relay (`securepush.relay_outbox.action`).
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case bind
        case release
    }

    /// The queue's order.
    public var id: Int64
    /// The token's platform (`Platform.rawValue`).
    public var platform: String
    /// The platform's token.
    public var token: String
    /// Bind or release.
    public var action: Action

    /// A change.
    public init(id: Int64, platform: String, token: String, action: Action) {
        self.id = id
        self.platform = platform
        self.token = token
        self.action = action
    }
}

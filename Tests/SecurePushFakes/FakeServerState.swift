/// The scripted answers of a fake platform: one per key (a device token, a channel, an endpoint path)
/// and one for every request whose key has none of its own.
struct FakeScript<Behavior: Sendable>: Sendable {
    /// The answers scripted per key.
    var byKey: [String: Behavior] = [:]
    /// The answer for every request without one of its own (a provider storm); `nil`: normal answers.
    var fallback: Behavior?

    /// The answer scripted for `key`, else the fallback.
    func behavior(for key: String) -> Behavior? {
        byKey[key] ?? fallback
    }
}

/// The OAuth access tokens a fake's token endpoint issued, whom each was issued to (a project, an app),
/// and which were revoked.
struct FakeAccessTokens: Sendable {
    /// Every token issued, in order.
    private(set) var issued: [String] = []
    private var owners: [String: String] = [:]
    private var revoked: Set<String> = []

    /// Records `token` as issued to `owner`.
    mutating func issue(_ token: String, to owner: String) {
        issued.append(token)
        owners[token] = owner
    }

    /// Revokes every token issued so far.
    mutating func revokeAll() {
        revoked.formUnion(issued)
    }

    /// Whether `token` was issued here and is not revoked.
    func isValid(_ token: String) -> Bool {
        issued.contains(token) && !revoked.contains(token)
    }

    /// Whom `token` was issued to.
    func owner(of token: String) -> String? {
        owners[token]
    }
}

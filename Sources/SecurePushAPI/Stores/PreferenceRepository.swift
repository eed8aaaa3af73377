import SecurePushStore

/// A user's quiet hours and muted categories: the seam between the HTTP handlers and `PreferenceStore` (SQL).
public protocol PreferenceRepository: Sendable {
    /// The user's quiet hours, or `nil`.
    func quietHours(userID: String) async throws -> QuietHours?
    /// Sets the user's quiet hours (an unknown time zone throws `InvalidInput`).
    func setQuietHours(userID: String, _ hours: QuietHours) async throws
    /// Removes the user's quiet hours; `false` when there were none.
    func clearQuietHours(userID: String) async throws -> Bool
    /// The user's categories with whether each is muted.
    func categories(userID: String) async throws -> [CategoryState]
    /// Mutes or unmutes a category; returns how many pending deliveries that cancelled.
    func setMuted(userID: String, category: String, muted: Bool) async throws -> Int
}

extension PreferenceStore: PreferenceRepository {}

/// The outcome feed's wake-up seam: one announcement to the feed's listeners when its head moved, so that the
/// statements that write events carry none.
public protocol EventAnnouncements: Sendable {
    /// Announces the head when it is past `lastHead`; returns the head.
    func announce(after lastHead: String?) async throws -> String?
}

/// The software version: the one place it is written (CHANGELOG.md's newest heading must match it:
/// `VersionTests`). Reported by `securepush --version`, in heartbeats and `/status`, and in the webhook's
/// `User-Agent`.
public enum SecurePushVersion {
    /// The current version.
    public static let current = "0.2.0"
}

/// The software version reported in heartbeats and `/status`.
public enum SecurePushVersion {
    /// The current version.
    public static let current = "0.1.0"
}

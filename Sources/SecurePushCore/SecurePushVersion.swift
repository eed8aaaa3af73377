/// The software version: the one place it is written (CHANGELOG.md's newest heading must match it:
/// `VersionTests`). Reported by `securepush --version`, in heartbeats and `/status`, and in the webhook's
/// `User-Agent`; the migrator compares it with the oldest build each newer migration allows
/// (`Migration.oldestBuild`, docs/operations.md § Upgrading).
public enum SecurePushVersion {
    /// The current version.
    public static let current = "0.3.16"

    /// Whether version `a` comes before version `b` (dotted numbers, compared number by number; a missing
    /// number counts as 0; text after a number is ignored).
    public static func precedes(_ a: String, _ b: String) -> Bool {
        func numbers(_ version: String) -> [Int] {
            version.split(separator: ".").map { Int($0.prefix { $0.isNumber }) ?? 0 }
        }
        let (x, y) = (numbers(a), numbers(b))
        for index in 0..<max(x.count, y.count) {
            let (p, q) = (index < x.count ? x[index] : 0, index < y.count ? y[index] : 0)
            if p != q { return p < q }
        }
        return false
    }
}

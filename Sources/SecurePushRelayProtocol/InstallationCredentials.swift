import Foundation

/// An installation's id and key as `securepush relay installation add` and `rotate-key` print them, once: the one
/// home of that output's form. The command prints `lines`; the tests and `ops/failover` read it back with
/// `init(printed:)`.
public struct InstallationCredentials: Sendable {
    /// The installation.
    public var id: UUID
    /// Its signing key (the relay keeps only the public half).
    public var key: InstallationKey

    /// Credentials.
    public init(id: UUID, key: InstallationKey) {
        self.id = id
        self.key = key
    }

    static let idLabel = "installation id: "

    /// What the command prints.
    public var lines: [String] {
        let id = self.id.uuidString.lowercased()
        return [
            Self.idLabel + id,
            "key (shown once; the relay keeps only its public half): \(key.text)",
            "on the self-hosted server: SECUREPUSH_RELAY_INSTALLATION_ID=\(id), and the key in the file SECUREPUSH_RELAY_KEY_FILE names",
        ]
    }

    /// Reads the id and key from the command's output; throws when it has neither.
    public init(printed output: String) throws {
        let lines = output.split(separator: "\n")
        guard let id = lines.first(where: { $0.hasPrefix(Self.idLabel) }).flatMap({ UUID(uuidString: String($0.dropFirst(Self.idLabel.count))) }),
            let keyLine = lines.first(where: { $0.contains(InstallationKey.prefix) }),
            let start = keyLine.range(of: InstallationKey.prefix)?.lowerBound
        else { throw RelayWireError("the output names no installation id and key") }
        self.init(id: id, key: try InstallationKey(text: String(keyLine[start...]).trimmingCharacters(in: .whitespaces)))
    }
}

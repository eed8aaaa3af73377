/// A configuration value that cannot be used; its message names the setting and never echoes secrets.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// A human sentence naming the setting and what is expected.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

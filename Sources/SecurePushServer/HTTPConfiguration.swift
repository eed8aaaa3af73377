/// Where and how the HTTP API listens.
public struct HTTPConfiguration: Sendable {
    /// Bind address (`SECUREPUSH_HOST`).
    public var host: String
    /// Port (`SECUREPUSH_PORT`).
    public var port: Int

    init(values: ConfigurationValues) throws {
        self.host = values.string("SECUREPUSH_HOST") ?? "127.0.0.1"
        self.port = try values.int("SECUREPUSH_PORT", default: 8080, in: 0...65535)
    }
}

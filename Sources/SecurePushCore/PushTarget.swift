import Foundation

/// A device as a push provider sees it: where to push, never what the notification says.
public struct PushTarget: Sendable, Hashable {
    /// The device's random identifier.
    public var deviceID: UUID
    /// The platform the token belongs to.
    public var platform: Platform
    /// The push token, registration token, channel URI or endpoint. Secret: never logged.
    public var token: String
    /// Platform options (APNs environment and topic, Web Push keys, ...), all strings.
    public var options: [String: String]

    /// Creates a target.
    public init(deviceID: UUID, platform: Platform, token: String, options: [String: String] = [:]) {
        self.deviceID = deviceID
        self.platform = platform
        self.token = token
        self.options = options
    }
}

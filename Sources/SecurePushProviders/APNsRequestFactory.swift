import Foundation
import SecurePushCore

/// Builds APNs requests: silent (`content-available`, background, priority 5) or alert
/// (generic text, `mutable-content`, alert, priority 10). The body carries only `secureId`.
public struct APNsRequestFactory: Sendable {
    /// How the push is presented on the device.
    public enum Style: String, Sendable, Hashable, Codable {
        /// A background push; iOS throttles these and drops them for force-quit apps.
        case silent
        /// A visible alert with generic text that a Notification Service Extension replaces.
        case alert
    }

    /// Generic, non-sensitive alert text for the alert style.
    public var alertTitle: String
    /// Generic alert body for the alert style.
    public var alertBody: String
    /// Style used when the device does not choose one (`push_style` option).
    public var defaultStyle: Style
    /// Bundle id used when the device has no `topic` option.
    public var defaultTopic: String?

    /// Creates a factory.
    public init(
        alertTitle: String = "New secure message", alertBody: String = "Open the app to read it.", defaultStyle: Style = .silent,
        defaultTopic: String? = nil
    ) {
        self.alertTitle = alertTitle
        self.alertBody = alertBody
        self.defaultStyle = defaultStyle
        self.defaultTopic = defaultTopic
    }

    /// The style for a push (device option `push_style`, else the default).
    public func style(for push: Push) -> Style {
        push.target.options["push_style"].flatMap(Style.init(rawValue:)) ?? defaultStyle
    }

    /// The request for one push.
    public func makeRequest(for push: Push) -> WireRequest {
        let id = push.notificationID.description
        let style = style(for: push)
        var headers: [WireHeader] = []
        if let topic = push.target.options["topic"] ?? defaultTopic {
            headers.append(WireHeader("apns-topic", topic))
        }
        switch style {
        case .silent:
            headers.append(WireHeader("apns-push-type", "background"))
            headers.append(WireHeader("apns-priority", "5"))
        case .alert:
            headers.append(WireHeader("apns-push-type", "alert"))
            headers.append(WireHeader("apns-priority", "10"))
        }
        headers.append(WireHeader("apns-expiration", String(Int64(push.expiresAt.timeIntervalSince1970.rounded(.down)))))
        headers.append(WireHeader("apns-collapse-id", id))
        return WireRequest(path: "/3/device/\(push.target.token)", headers: headers, body: body(id: id, style: style))
    }

    /// The body, built directly (it is on every push's hot path): keys in sorted order, as JSON.
    func body(id: String, style: Style) -> Data {
        switch style {
        case .silent:
            return Data(#"{"aps":{"content-available":1},"secureId":"\#(id)"}"#.utf8)
        case .alert:
            let alert = #"{"body":\#(Self.jsonString(alertBody)),"title":\#(Self.jsonString(alertTitle))}"#
            return Data(#"{"aps":{"alert":\#(alert),"mutable-content":1},"secureId":"\#(id)"}"#.utf8)
        }
    }

    /// A JSON string literal for `text`.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

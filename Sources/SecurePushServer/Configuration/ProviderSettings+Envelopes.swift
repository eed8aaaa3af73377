import Foundation
import SecurePushCore
import SecurePushProviders
import SecurePushStore

extension ProviderSettings {
    /// Settings that were renamed, and what replaced them: a deployment still setting one must not silently
    /// fall back to a default.
    static let renamedSettings = [
        "SECUREPUSH_APNS_ALERT_TITLE": "SECUREPUSH_ALERT_TITLE",
        "SECUREPUSH_APNS_ALERT_BODY": "SECUREPUSH_ALERT_BODY",
    ]

    /// `SECUREPUSH_ALERT_TITLE`, `SECUREPUSH_ALERT_BODY`, `SECUREPUSH_ALERT_TITLE_LOC_KEY`,
    /// `SECUREPUSH_ALERT_LOC_KEY` and `SECUREPUSH_APNS_PUSH_STYLE` (docs/envelopes.md).
    static func envelopes(_ values: ConfigurationValues) throws -> EnvelopeSettings {
        for (old, new) in renamedSettings.sorted(by: { $0.key < $1.key }) where values.string(old) != nil {
            throw ConfigurationError("\(old) was renamed \(new) (the generic text now applies to every platform); set that instead")
        }
        func text(_ key: String) throws -> String? {
            guard let value = values.string(key) else { return nil }
            guard value.utf8.count <= GenericAlert.maxBytes else {
                throw ConfigurationError("\(key) must be at most \(GenericAlert.maxBytes) bytes of UTF-8, got \(value.utf8.count)")
            }
            guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ConfigurationError("\(key) must not contain control characters (line breaks, tabs)")
            }
            return value
        }
        let alert = GenericAlert(
            title: try text("SECUREPUSH_ALERT_TITLE") ?? GenericAlert.defaultTitle,
            body: try text("SECUREPUSH_ALERT_BODY") ?? GenericAlert.defaultBody,
            titleLocKey: try text("SECUREPUSH_ALERT_TITLE_LOC_KEY"),
            bodyLocKey: try text("SECUREPUSH_ALERT_LOC_KEY")
        )
        let style = try values.choice(
            "SECUREPUSH_APNS_PUSH_STYLE", default: PushStyle.alert.rawValue, allowed: PushStyle.allCases.map(\.rawValue))
        return EnvelopeSettings(alert: alert, apnsStyle: PushStyle(rawValue: style) ?? .alert)
    }

    /// `SECUREPUSH_WEBPUSH_NAVIGATE_URL`: the https page a tap on a Web Push notification opens; `{id}` in
    /// it is replaced by the notification id.
    static func navigateURL(_ values: ConfigurationValues) throws -> String {
        let key = "SECUREPUSH_WEBPUSH_NAVIGATE_URL"
        let template = try required(
            values, key, hint: "the https page a tap on a Web Push notification opens, such as https://app.example.com/notifications/{id}")
        let sample = template.replacingOccurrences(of: "{id}", with: UUID().uuidString.lowercased())
        guard template.utf8.count <= 2048, let url = URL(string: sample), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else {
            throw ConfigurationError("\(key) must be an https URL (at most 2048 bytes; {id} stands for the notification id), got \"\(template)\"")
        }
        return template
    }
}

/// The generic text a visible push shows until the app replaces it with the fetched notification, or
/// instead of it when the fetch fails. It comes from configuration (`SECUREPUSH_ALERT_*`), never from a
/// payload, so it must not say anything sensitive.
public struct GenericAlert: Sendable, Hashable {
    /// The default title.
    public static let defaultTitle = "New notification"
    /// The default body.
    public static let defaultBody = "Open the app to read it."
    /// The longest title, body or localization key, in UTF-8 bytes (keeps every envelope far below 4 KiB).
    public static let maxBytes = 160

    /// The title (`SECUREPUSH_ALERT_TITLE`).
    public var title: String
    /// The body (`SECUREPUSH_ALERT_BODY`).
    public var body: String
    /// A key of the app's localized strings for the title (`SECUREPUSH_ALERT_TITLE_LOC_KEY`): APNs
    /// `title-loc-key`, FCM data `title_loc_key`.
    public var titleLocKey: String?
    /// A key of the app's localized strings for the body (`SECUREPUSH_ALERT_LOC_KEY`): APNs `loc-key`,
    /// FCM data `body_loc_key`.
    public var bodyLocKey: String?

    /// Creates the generic text.
    public init(title: String = Self.defaultTitle, body: String = Self.defaultBody, titleLocKey: String? = nil, bodyLocKey: String? = nil) {
        self.title = title
        self.body = body
        self.titleLocKey = titleLocKey
        self.bodyLocKey = bodyLocKey
    }
}

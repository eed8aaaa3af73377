import Foundation

/// What an opened sealed push holds: the notification's id and the preview its producer let travel sealed.
/// A `nil` preview means the push was sealed id-only: fetch the notification as usual.
public struct SealedPreview: Sendable, Hashable {
    /// The notification's id (checked to be the push's id).
    public var id: UUID
    /// The producer's preview object, `nil` when the push carried none.
    public var preview: [String: JSONValue]?

    /// Creates a preview.
    public init(id: UUID, preview: [String: JSONValue]?) {
        self.id = id
        self.preview = preview
    }

    /// The preview's `title` string, to show instead of the generic text.
    public var title: String? { preview?["title"]?.stringValue }

    /// The preview's `body` string, to show instead of the generic text.
    public var body: String? { preview?["body"]?.stringValue }

    /// The decrypted, unpadded content: `{"id": "<uuid>"}` or `{"id": "<uuid>", "preview": {...}}`,
    /// whose id must be `id`.
    init(id: UUID, content: Data) throws(SealedPushError) {
        struct Content: Decodable {
            var id: String
            var preview: [String: JSONValue]?
        }
        guard let decoded = try? JSONDecoder().decode(Content.self, from: content) else { throw .malformedContent }
        guard UUID(uuidString: decoded.id) == id else { throw .idMismatch }
        self.init(id: id, preview: decoded.preview)
    }
}

import Foundation
import SecurePushCore
import SecurePushStore

/// The listing cursor as the read API speaks it (`next_cursor`, `?cursor=`). The store knows only the
/// position (`ListCursor`); this is its one wire format.
extension ListCursor {
    /// The token clients pass back: `<micros>_<uuid>`. Any string of that form is a position in the
    /// listing (so the contract can describe exactly which cursors are valid); clients treat it as opaque.
    public var token: String {
        "\(createdAtMicros)_\(id.uuidString.lowercased())"
    }

    /// Parses a token made by `token`; `nil` if malformed.
    public init?(token: String) {
        let parts = token.split(separator: "_", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, (1...18).contains(parts[0].utf8.count), parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
            let micros = Int64(parts[0]), let id = NotificationID(parts[1])
        else { return nil }
        self.init(createdAtMicros: micros, id: id.uuid)
    }
}

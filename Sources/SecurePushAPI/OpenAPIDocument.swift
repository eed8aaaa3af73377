import Foundation

/// The API contract, `docs/openapi.json`, embedded at build time (served at `GET /openapi.json`).
public enum OpenAPIDocument {
    /// The document's bytes, exactly as checked in.
    public static let data: Data = {
        guard let file = EmbeddedOpenAPI.files.first, let data = Data(base64Encoded: file.base64) else {
            preconditionFailure("docs/openapi.json was not embedded")
        }
        return data
    }()

    /// The document, parsed.
    public static var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    }

    /// Every documented path template (`/v1/notifications/{id}`) with its methods in upper case.
    public static let operations: [String: Set<String>] = {
        let paths = json["paths"] as? [String: Any] ?? [:]
        return paths.mapValues { item in
            Set((item as? [String: Any] ?? [:]).keys.map { $0.uppercased() }.filter { methods.contains($0) })
        }
    }()

    static let methods: Set<String> = ["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]

    /// The documented template a concrete path matches (`{name}` matches one non-empty segment).
    public static func template(for path: String) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        return operations.keys.sorted().first { template in
            let parts = template.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == segments.count else { return false }
            return zip(parts, segments).allSatisfy { part, segment in
                (part.hasPrefix("{") && part.hasSuffix("}") && !segment.isEmpty) || part == segment
            }
        }
    }
}

import Foundation
import SecurePushFakes
import Testing

/// A golden envelope of docs/envelopes/: one request exactly as a fake server recorded it, as text: the request
/// line, every header in order, a blank line and the body. A platform's envelopes are the sections of one file,
/// `<platform>.http`, each headed `### <name>` (the name's first word is the platform: `wns-clear` is a
/// section of `wns.http`). Values that change from push to push are written
/// as placeholders (`{id}`, `{token}`, `{expiration}`, `{ttl}`, `{jwt}`, ...), replaced by the push's values
/// before comparing, so everything else is compared byte for byte.
///
/// Only the headers the HTTP client adds by itself are left out (`transportHeaders`). With
/// `SECUREPUSH_RECORD_GOLDEN=1` a mismatch rewrites the file from the recording (and the test still fails).
struct GoldenEnvelope {
    /// docs/envelopes/ of this checkout.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/envelopes")

    /// Headers AsyncHTTPClient adds: not part of an envelope.
    static let transportHeaders: Set<String> = ["host", "content-length", "user-agent", "connection"]

    /// The largest body a platform accepts.
    static let maxBodyBytes = 4096

    /// The golden envelope's name: its section's heading, whose first word names the file.
    var name: String

    /// The file holding the section.
    var file: URL { Self.directory.appendingPathComponent("\(name.prefix { $0 != "-" }).http") }

    /// The sections of a golden file by name; each section's text ends with one newline.
    static func sections(of text: String) -> [(name: String, text: String)] {
        var sections: [(name: String, lines: [Substring])] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("### ") {
                sections.append((String(line.dropFirst(4)), []))
            } else if !sections.isEmpty {
                sections[sections.count - 1].lines.append(line)
            }
        }
        return sections.map { ($0.name, $0.lines.joined(separator: "\n")) }
    }

    /// A golden file's text from its sections: each `### <name>` heading and its text, a blank line between.
    static func text(of sections: [(name: String, text: String)]) -> String {
        sections.map { "### \($0.name)\n\($0.text)" }.joined(separator: "\n")
    }

    /// The recorded request rendered in the golden form, with the placeholders' values in place.
    static func render(method: String, path: String, headers: [(name: String, value: String)], body: Data) -> String {
        var text = "\(method) \(path)\n"
        for header in headers where !transportHeaders.contains(header.name) {
            text += "\(header.name): \(header.value)\n"
        }
        return text + "\n" + String(decoding: body, as: UTF8.self) + "\n"
    }

    /// Expects `request` (with `body`, e.g. the decrypted Web Push plaintext) to be the golden file once its
    /// placeholders are replaced by `values`, and the body to fit the platforms' 4 KiB.
    /// `omitting` names golden headers the recording is expected to lack (the simulated platform records the
    /// envelope without the provider's `authorization` and `content-type`).
    func expect(
        _ request: FakeRequest, body: Data? = nil, values: [String: String], omitting: Set<String> = [],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let body = body ?? request.body
        #expect(body.count <= Self.maxBodyBytes, "the \(name) body is \(body.count) bytes", sourceLocation: sourceLocation)
        let actual = Self.render(method: request.method, path: request.path, headers: request.headers, body: body)
        let fileText = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        var sections = Self.sections(of: fileText)
        var template = sections.first { $0.name == name }?.text ?? ""
        if !omitting.isEmpty {
            template = template.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { line in !omitting.contains { line.hasPrefix("\($0): ") } }.joined(separator: "\n")
        }
        var expected = template
        for (placeholder, value) in values { expected = expected.replacingOccurrences(of: "{\(placeholder)}", with: value) }
        guard actual != expected else { return }
        var recorded = actual
        for (placeholder, value) in values.sorted(by: { $0.value.count > $1.value.count }) {
            recorded = recorded.replacingOccurrences(of: value, with: "{\(placeholder)}")
        }
        if ProcessInfo.processInfo.environment["SECUREPUSH_RECORD_GOLDEN"] == "1", omitting.isEmpty {
            if let index = sections.firstIndex(where: { $0.name == name }) {
                sections[index].text = recorded
            } else {
                sections.append((name, recorded))
            }
            try Self.text(of: sections).write(to: file, atomically: true, encoding: .utf8)
        }
        Issue.record(
            "\(file.lastPathComponent)'s section \(name) differs from the wire; recorded:\n\(recorded)\nexpected:\n\(template)",
            sourceLocation: sourceLocation)
    }
}

import Foundation
import Logging
import NIOConcurrencyHelpers
import Testing

@testable import SecurePushServer

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    @Test("one JSON object a line: time, level, label, source, message and metadata (lists and objects kept), handler metadata merged")
    func oneObjectALine() throws {
        let lines = NIOLockedValueBox<[String]>([])
        var handler = JSONLogHandler(label: "securepush") { line in lines.withLockedValue { $0.append(line) } }
        handler.logLevel = .debug
        handler[metadataKey: "dispatcher.id"] = "d-1"
        var logger = Logger(label: "securepush") { _ in handler }
        logger.logLevel = .debug
        logger.notice(
            "a \"quoted\" message\nover two lines",
            metadata: ["count": "\(3)", "list": ["a", "b"], "object": ["k": "v"]])
        let written = lines.withLockedValue { $0 }
        #expect(written.count == 1)
        #expect(written[0].hasSuffix("\n") && written[0].dropLast().contains("\n") == false, "one line")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written[0].utf8)) as? [String: Any])
        #expect(object["level"] as? String == "notice")
        #expect(object["label"] as? String == "securepush")
        #expect(object["message"] as? String == "a \"quoted\" message\nover two lines")
        #expect((object["source"] as? String)?.isEmpty == false)
        #expect(object["time"] is String)
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["dispatcher.id"] as? String == "d-1")
        #expect(metadata["count"] as? String == "3")
        #expect(metadata["list"] as? [String] == ["a", "b"])
        #expect((metadata["object"] as? [String: String]) == ["k": "v"])
    }

    @Test("SECUREPUSH_LOG_FORMAT is text by default, json when asked, anything else a clear error")
    func setting() throws {
        let base = ["DATABASE_URL": "postgres://app:s3cret@db.internal:5433/push"]
        #expect(try SecurePushConfiguration(environment: base).database.logFormat == .text)
        #expect(try SecurePushConfiguration(environment: base.merging(["SECUREPUSH_LOG_FORMAT": "json"]) { $1 }).database.logFormat == .json)
        #expect(throws: (any Error).self) { try SecurePushConfiguration(environment: base.merging(["SECUREPUSH_LOG_FORMAT": "xml"]) { $1 }) }
    }
}

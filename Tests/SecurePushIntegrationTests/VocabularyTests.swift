import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushTestSupport
import Testing

/// The SQL side spells platforms and outcomes too: it must list exactly the Swift cases.
@Suite("One vocabulary in Swift and SQL")
struct VocabularyTests {
    /// The quoted words of a CHECK constraint's definition, as PostgreSQL prints it.
    static func quotedWords(_ text: String) -> Set<String> {
        var words: Set<String> = []
        var current: String?
        for character in text {
            if character == "'" {
                if let word = current {
                    words.insert(word)
                    current = nil
                } else {
                    current = ""
                }
            } else if current != nil {
                current!.append(character)
            }
        }
        return words
    }

    static func constraint(_ db: TestDatabase, _ name: String) async throws -> Set<String> {
        let definition: String = try await db.scalar(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = \(name) AND connamespace = 'securepush'::regnamespace")
        return quotedWords(definition)
    }

    @Test("devices_platform_valid lists exactly Platform's cases")
    func platformConstraint() async throws {
        try await TestDatabase.with { db in
            let listed = try await Self.constraint(db, "devices_platform_valid")
            #expect(listed == Set(Platform.allCases.map(\.rawValue)))
        }
    }

    @Test("delivery_log_outcome_valid lists exactly the final outcome kinds")
    func outcomeConstraint() async throws {
        try await TestDatabase.with { db in
            let listed = try await Self.constraint(db, "delivery_log_outcome_valid")
            #expect(listed == Set(DeliveryOutcome.Kind.final.map(\.rawValue)))
        }
    }

    @Test("validate_device accepts every Swift platform and names exactly them when refusing one")
    func validateDevice() async throws {
        try await TestDatabase.with { db in
            let source: String = try await db.scalar(
                // Since 006, validate_device checks the WNS app option and hands the rest to validate_device_options.
                "SELECT pg_get_functiondef('securepush.validate_device_options(text, text, jsonb)'::regprocedure)")
            // `IF platform IS NULL OR platform NOT IN ('apns', ...) THEN RAISE ... 'platform must be one of apns, ...'`
            let check = try #require(source.range(of: "platform NOT IN (")).upperBound
            let list = source[check...].prefix { $0 != ")" }
            #expect(Self.quotedWords(String(list)) == Set(Platform.allCases.map(\.rawValue)), "\(list)")
            let message = try #require(source.range(of: "platform must be one of ")).upperBound
            let named = source[message...].prefix { $0 != "'" }.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(Set(named) == Set(Platform.allCases.map(\.rawValue)), "the error message names them too")
            for platform in Platform.allCases {
                do {
                    try await db.execute("SELECT securepush.validate_device(\(platform.rawValue), 'x', '{}'::jsonb)")
                } catch {
                    // Other checks (the token's form) may refuse 'x'; the platform itself must not be the reason.
                    #expect(!String(reflecting: error).contains("platform must be one of"), "\(platform) refused as a platform")
                }
            }
        }
    }
}

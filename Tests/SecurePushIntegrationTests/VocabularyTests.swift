import Foundation
import PostgresNIO
import SecurePushCore
import SecurePushProviders
import SecurePushStore
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

    /// Every CHECK word list of the schema and the Swift type whose cases it must list: one place for them all.
    static let wordLists: [String: Set<String>] = [
        "devices_platform_valid": Set(Platform.allCases.map(\.rawValue)),
        "delivery_log_outcome_valid": Set(DeliveryOutcome.Kind.final.map(\.rawValue)),
        "deliveries_state_valid": Set(DeliveryState.allCases.map(\.rawValue)),
        "notifications_urgency_valid": Set(Urgency.allCases.map(\.rawValue)),
        "deliveries_kind_valid": Set(PushKind.Name.allCases.map(\.rawValue)),
        "delivery_log_kind_valid": Set(PushKind.Name.allCases.map(\.rawValue)),
        "audit_log_event_valid": Set(AuditEvent.allCases.map(\.rawValue)),
        "delivery_events_event_valid": Set(DeliveryEventKind.allCases.map(\.rawValue)),
        "relay_outbox_action_check": Set(RelayRegistrationChange.Action.allCases.map(\.rawValue)),
    ]

    @Test("every CHECK word list in the schema lists exactly its Swift type's cases, and each has its Swift type")
    func wordListsMatchTheirTypes() async throws {
        try await TestDatabase.with { db in
            let rows = try await db.client.query(
                """
                SELECT conname::text, pg_get_constraintdef(oid) FROM pg_constraint
                WHERE connamespace = 'securepush'::regnamespace AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%= ANY (ARRAY[''%'
                """, logger: db.logger
            ).collect()
            var seen: Set<String> = []
            for row in rows {
                let (name, definition) = try row.decode((String, String).self)
                seen.insert(name)
                guard let words = Self.wordLists[name] else {
                    Issue.record("\(name) is a word list with no Swift type in VocabularyTests.wordLists: \(definition)")
                    continue
                }
                #expect(Self.quotedWords(definition) == words, "\(name): SQL \(Self.quotedWords(definition).sorted()), Swift \(words.sorted())")
            }
            #expect(
                seen == Set(Self.wordLists.keys),
                "word lists named here but not in the schema: \(Set(Self.wordLists.keys).subtracting(seen).sorted())")
        }
    }

    /// Every word list a routine body spells (`IN ('a', 'b')`, `ARRAY['a', 'b']`) and its home: the Swift cases it
    /// must list (computed from the type, so a case added in Swift fails here until the SQL lists it), or why SQL
    /// alone owns the words. A list in a routine that is not here fails `routineWordLists`.
    static let routineLists: [(words: Set<String>, home: String)] = [
        (Set(Urgency.allCases.map(\.rawValue)), "Urgency.allCases (enqueue.sql)"),
        (Set(Urgency.allCases.filter { !$0.respectsQuietHours }.map(\.rawValue)), "Urgency.respectsQuietHours (fan_out_batch.sql, release_at.sql)"),
        (Set(Platform.allCases.map(\.rawValue)), "Platform.allCases (validate_device_options.sql)"),
        (Set(Platform.allCases.filter(\.sealsItsOwnMessage).map(\.rawValue)), "Platform.sealsItsOwnMessage (set_sealing_key.sql)"),
        (Set(PushStyle.allCases.map(\.rawValue)), "PushStyle.allCases (validate_device_options.sql)"),
        (Set([DeliveryState.scheduled, .pending].map(\.rawValue)), "DeliveryState: the states a delivery waits in"),
        (Set([AuditEvent.sealingKeySet, .sealingKeyCleared].map(\.rawValue)), "AuditEvent: the sealing key's events"),
        (["production", "sandbox"], "SQL's own: an APNs device's environment option (validate_device_options.sql is its home)"),
        (["very-low", "low", "normal", "high"], "SQL's own: RFC 8030's Urgency words, a Web Push device's option"),
        (["p256dh", "auth", "urgency"], "SQL's own: a Web Push device's option keys"),
        (["environment", "push_style", "topic"], "SQL's own: an APNs device's option keys"),
        (["push_style", "topic"], "SQL's own: the option keys of a relayed APNs device"),
        (["project"], "SQL's own: an FCM device's option key"),
        (["devices", "token", "category_mutes", "relay_platforms"], "SQL's own: lock_slot's kinds"),
        (["sync", "quorum"], "PostgreSQL's: pg_stat_replication.sync_state"),
        (["INSERT", "UPDATE"], "PostgreSQL's: TG_OP"),
        (["UPDATE", "DELETE"], "PostgreSQL's: TG_OP"),
    ]

    @Test("every word list a routine body spells is one whose home is named here, and equals its Swift type's cases")
    func routineWordLists() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sql/routines")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count > 50, "the routine files were found: \(files.count)")
        let list = try Regex(#"(?:IN \(|ARRAY\[)('[^']*'(?:\s*,\s*'[^']*')*)[)\]]"#)
        var found = 0
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: list) {
                guard let words = match.output[1].substring.map({ Self.quotedWords(String($0)) }) else { continue }
                found += 1
                #expect(Self.routineLists.contains { $0.words == words }, "\(file) spells \(words.sorted()): name its home in routineLists")
            }
        }
        #expect(found >= 17, "the lists were found: \(found)")
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

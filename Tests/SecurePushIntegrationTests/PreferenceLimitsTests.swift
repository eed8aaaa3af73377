import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import SecurePushClient
import SecurePushTestSupport
import Testing

/// What one user or device can pile up, against the real binary (issue 32, item 6): muted categories per
/// user and sealing-key changes per device are bounded (migration 021).
@Suite("Preference limits, end to end", .serialized)
struct PreferenceLimitsTests {
    @Test("a user mutes at most max_muted_categories categories: one more is 400, re-muting and unmuting always work")
    func mutedCategoriesCap() async throws {
        try await DeliveryControlsTests.withServed { served in
            try await served.db.execute("UPDATE securepush.settings SET value = '3' WHERE key = 'max_muted_categories'")
            let device = try await served.register(user: "muter", token: "muter-1")
            let mute = { @Sendable (name: String, muted: Bool) async throws -> UInt in
                try await served.request(.PUT, "/v1/categories/\(name)", credential: device, body: #"{"muted":\#(muted)}"#).status
            }
            for name in ["a", "b", "c"] { #expect(try await mute(name, true) == 200) }
            let over = try await served.request(.PUT, "/v1/categories/d", credential: device, body: #"{"muted":true}"#)
            #expect(over.status == 400 && over.body.contains("invalid_parameter") && over.body.contains("at most 3"), "\(over.body)")
            #expect(try await mute("a", true) == 200, "muting a muted category again is no new mute")
            #expect(try await mute("b", false) == 200)
            #expect(try await mute("d", true) == 200, "room again after an unmute")
            let muted: Int64 = try await served.db.scalar("SELECT count(*)::bigint FROM securepush.category_mutes WHERE user_id = 'muter'")
            #expect(muted == 3)
        }
    }

    @Test("a device changes its sealing key at most max_sealing_key_changes_per_hour times an hour: then 429 with Retry-After")
    func sealingKeyChangeRate() async throws {
        try await DeliveryControlsTests.withServed { served in
            try await served.db.execute("UPDATE securepush.settings SET value = '2' WHERE key = 'max_sealing_key_changes_per_hour'")
            let device = try await served.register(user: "sealer", token: "sealer-1")
            let key = SealingKeyRoutesTests.keyJSON(SealingKey.generate())
            #expect(try await served.request(.PUT, "/v1/devices/current/sealing-key", credential: device, body: key).status == 204)
            #expect(try await served.request(.DELETE, "/v1/devices/current/sealing-key", credential: device).status == 204)
            let third = try await served.request(.PUT, "/v1/devices/current/sealing-key", credential: device, body: key)
            #expect(third.status == 429 && !third.headers["retry-after"].isEmpty, "\(third.body)")
            let rotation = try await served.request(.POST, "/v1/devices/current/rotate", credential: device, body: #"{"sealing_key":\#(key)}"#)
            #expect(rotation.status == 429, "a rotation with a key is a key change too: \(rotation.body)")
            // The refused rotation changed nothing: the credential still works, and no audit row was added.
            #expect(try await served.request(.GET, "/v1/notifications", credential: device).status == 200)
            let audited: Int64 = try await served.db.scalar(
                "SELECT count(*)::bigint FROM securepush.audit_log WHERE event IN ('sealing_key_set', 'sealing_key_cleared') AND user_id = 'sealer'")
            #expect(audited == 2)
        }
    }
}

import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import SecurePushClient
import SecurePushTestSupport
import Testing

/// Token changes and re-registrations against the real binary (issue 32, items 4 and 5): one hourly budget,
/// races on one token answered without a 500, and sealing keys that follow the registration.
@Suite("Token changes and re-registrations, end to end", .serialized)
struct TokenChangeTests {
    typealias Served = DeliveryControlsTests.Served

    /// Registers a simulated device for `user` with `body` (JSON); returns the status and the parsed answer.
    static func register(_ served: Served, user: String, body: String) async throws -> (status: UInt, json: [String: Any]) {
        let response = try await served.request(
            .POST, "/v1/devices", body: body, headers: [("Authorization", "Bearer \(try await HostileInputTests.userToken(user))")])
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body.utf8))) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    @Test("registrations and token changes share one hourly budget, as the README says")
    func sharedBudget() async throws {
        try await DeliveryControlsTests.withServed { served in
            try await served.db.execute("UPDATE securepush.settings SET value = '3' WHERE key = 'max_registrations_per_hour'")
            let device = try await served.register(user: "budget", token: "budget-1")
            for index in 2...3 {
                let change = try await served.request(.PUT, "/v1/devices/current/token", credential: device, body: #"{"token":"budget-\#(index)"}"#)
                #expect(change.status == 204, "\(change.body)")
            }
            // The budget is spent by one registration and two changes: a fourth of either is refused.
            let change = try await served.request(.PUT, "/v1/devices/current/token", credential: device, body: #"{"token":"budget-4"}"#)
            #expect(change.status == 429 && !change.headers["retry-after"].isEmpty, "\(change.body)")
            let registration = try await Self.register(served, user: "budget", body: #"{"platform":"simulated","token":"budget-5"}"#)
            #expect(registration.status == 429)
            // Another user's budget is its own.
            #expect(try await Self.register(served, user: "calm", body: #"{"platform":"simulated","token":"calm-1"}"#).status == 201)
        }
    }

    @Test("devices changing to one token at once, and a change racing a registration of it: 204 or 201, never a 500")
    func racesOnOneToken() async throws {
        try await DeliveryControlsTests.withServed { served in
            for round in 0..<6 {
                let credentials = try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<4 {
                        group.addTask { try await served.register(user: "race-\(round)-\(index)", token: "race-\(round)-\(index)") }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let target = "race-target-\(round)"
                let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                    for credential in credentials {
                        group.addTask {
                            try await served.request(.PUT, "/v1/devices/current/token", credential: credential, body: #"{"token":"\#(target)"}"#)
                                .status
                        }
                    }
                    group.addTask {
                        try await Self.register(served, user: "race-taker-\(round)", body: #"{"platform":"simulated","token":"\#(target)"}"#).status
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 204 || $0 == 201 }, "round \(round): \(statuses)")
                // One device holds the token at the end, active.
                let holders: Int64 = try await served.db.scalar(
                    "SELECT count(*)::bigint FROM securepush.devices WHERE platform = 'simulated' AND token = \(target) AND active")
                #expect(holders == 1)
            }
        }
    }

    @Test("a re-registration without a sealing key clears the stored one and says so; another user's key never stays")
    func sealingKeyFollowsRegistration() async throws {
        try await DeliveryControlsTests.withServed { served in
            let key = SealingKeyRoutesTests.keyJSON(SealingKey.generate())
            let first = try await Self.register(served, user: "keyed", body: #"{"platform":"simulated","token":"keyed-1","sealing_key":\#(key)}"#)
            #expect(first.status == 201 && first.json["sealing"] as? Bool == true)
            let device = try #require(first.json["device_id"] as? String)
            let stored = { @Sendable () async throws -> Bool in
                try await served.db.scalar("SELECT seal_public IS NOT NULL FROM securepush.devices WHERE id = \(device)::uuid")
            }
            #expect(try await stored())
            // The same user registers the token again without a key: the answer and the row agree.
            let again = try await Self.register(served, user: "keyed", body: #"{"platform":"simulated","token":"keyed-1"}"#)
            #expect(again.status == 201 && again.json["sealing"] as? Bool == false)
            #expect(try await !stored())
            // An attacker registers the token first with his own key; the owner's registration without one drops it.
            let attacker = try await Self.register(
                served, user: "mallory", body: #"{"platform":"simulated","token":"keyed-1","sealing_key":\#(key)}"#)
            #expect(attacker.status == 201 && attacker.json["sealing"] as? Bool == true)
            #expect(try await stored())
            let owner = try await Self.register(served, user: "keyed", body: #"{"platform":"simulated","token":"keyed-1"}"#)
            #expect(owner.status == 201 && owner.json["sealing"] as? Bool == false)
            #expect(try await !stored(), "the owner's previews are never sealed to the attacker's key")
        }
    }
}

import Foundation
import SecurePushCore
import Testing

/// The breaker's state machine, driven with explicit instants (no clock, no sleeping). The rules of a whole
/// platform's breaker are tested with `distinctUsers: 1` (as the dispatcher makes them); the distinct-user
/// rule of a push service's breaker has its own tests.
@Suite("CircuitBreaker")
struct CircuitBreakerTests {
    let start = ContinuousClock.now
    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    func failures(_ count: Int, into breaker: inout CircuitBreaker, at time: Int, retryAfter: Duration? = nil) {
        for _ in 0..<count { breaker.record(.failure(retryAfter: retryAfter), probe: false, at: at(time)) }
    }

    @Test("five provider failures in a row open it for 1 s; then it lets one probe through")
    func consecutiveFailures() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        failures(4, into: &breaker, at: 0)
        #expect(breaker.phase(at: at(0)) == .closed)
        #expect(breaker.permit(at: at(0)) == .send)
        failures(1, into: &breaker, at: 10)
        #expect(breaker.state == .open(until: at(1010)))
        #expect(breaker.openings == 1)
        #expect(breaker.permit(at: at(500)) == .reject(retryAfter: .milliseconds(510)))
        #expect(!breaker.wouldPermit(at: at(500)))
        #expect(breaker.wouldPermit(at: at(1010)))
        #expect(breaker.phase(at: at(1010)) == .halfOpen)
        #expect(breaker.permit(at: at(1010)) == .probe)
        #expect(breaker.permit(at: at(1011)) == .reject(retryAfter: .seconds(1)), "one probe at a time")
        #expect(!breaker.wouldPermit(at: at(1011)))
    }

    @Test("a success in between resets the run of failures")
    func successResets() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        for _ in 0..<3 {
            failures(4, into: &breaker, at: 0)
            breaker.record(.success, probe: false, at: at(0))
        }
        #expect(breaker.phase(at: at(0)) == .closed, "12 failures, never 5 in a row, 12 of 15 below the 20-result minimum")
    }

    @Test("half of at least 20 results in the window open it, without 5 in a row")
    func failureRatio() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        for index in 0..<19 {
            breaker.record(index.isMultiple(of: 2) ? .failure(retryAfter: nil) : .success, probe: false, at: at(index * 100))
        }
        #expect(breaker.phase(at: at(1900)) == .closed, "19 results: below the minimum")
        #expect(breaker.windowCounts(at: at(1900)) == (results: 19, failures: 10))
        breaker.record(.success, probe: false, at: at(1900))
        breaker.record(.failure(retryAfter: nil), probe: false, at: at(2000))
        #expect(breaker.phase(at: at(2000)) == .open, "11 of 21 failed")
    }

    @Test("results older than the window no longer count")
    func windowSlides() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        for index in 0..<16 {
            breaker.record(index.isMultiple(of: 4) ? .success : .failure(retryAfter: nil), probe: false, at: at(index))
        }
        #expect(breaker.windowCounts(at: at(100)) == (results: 16, failures: 12))
        // 12 s later the old results are gone: 4 successes and 2 failures do not reach 20 results.
        for index in 0..<6 {
            breaker.record(index < 4 ? .success : .failure(retryAfter: nil), probe: false, at: at(12_000 + index))
        }
        #expect(breaker.windowCounts(at: at(12_010)) == (results: 6, failures: 2))
        #expect(breaker.phase(at: at(12_010)) == .closed)
    }

    @Test("per-device answers and cancelled sends do not count as provider failures")
    func onlyProviderFailuresCount() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        let answers: [PushResult] = [
            .retry(after: .seconds(30), reason: "APNs 429 TooManyRequests", scope: .device),
            .tokenInvalid(reason: "APNs 410 Unregistered"), .failed(reason: "APNs 400 BadTopic"), .sent(messageID: nil),
        ]
        for _ in 0..<10 {
            for answer in answers { breaker.record(CircuitBreaker.Result(answer), probe: false, at: at(0)) }
            breaker.record(.inconclusive, probe: false, at: at(0))
        }
        #expect(breaker.phase(at: at(0)) == .closed)
        #expect(breaker.windowCounts(at: at(0)) == (results: 40, failures: 0))
        #expect(CircuitBreaker.Result(.retry(after: nil, reason: "APNs 503", scope: .provider)) == .failure(retryAfter: nil))
        #expect(CircuitBreaker.Result(.retry(after: .seconds(60), reason: "FCM 429", scope: .provider)) == .failure(retryAfter: .seconds(60)))
    }

    @Test("a provider's Retry-After opens it at once, at least until then")
    func retryAfterOpens() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        breaker.record(.failure(retryAfter: .seconds(90)), probe: false, at: at(0))
        #expect(breaker.state == .open(until: at(90_000)))
        // A late result with a longer Retry-After extends it; a shorter one does not shorten it.
        breaker.record(.failure(retryAfter: .seconds(120)), probe: false, at: at(1000))
        #expect(breaker.state == .open(until: at(121_000)))
        breaker.record(.failure(retryAfter: .seconds(1)), probe: false, at: at(2000))
        #expect(breaker.state == .open(until: at(121_000)))
        #expect(breaker.openings == 1)
    }

    @Test("each failed probe doubles the open time, up to 60 s; a successful probe closes it and resets it")
    func probes() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        failures(5, into: &breaker, at: 0)
        var now = 0
        var expected = [2, 4, 8, 16, 32, 60, 60].makeIterator()
        while let seconds = expected.next() {
            guard case .open(let until) = breaker.state else {
                Issue.record("not open: \(breaker.state)")
                return
            }
            now = Int((until - start) / .milliseconds(1))
            #expect(breaker.permit(at: at(now)) == .probe)
            breaker.record(.failure(retryAfter: nil), probe: true, at: at(now))
            #expect(breaker.state == .open(until: at(now + seconds * 1000)), "open \(seconds) s after a failed probe")
        }
        now += 60_000
        #expect(breaker.permit(at: at(now)) == .probe)
        breaker.record(.success, probe: true, at: at(now))
        #expect(breaker.state == .closed)
        #expect(breaker.openings == 8)
        failures(5, into: &breaker, at: now)
        #expect(breaker.state == .open(until: at(now + 1000)), "back to 1 s after closing")
    }

    @Test("a late result of a send started before it opened does not decide a half-open breaker")
    func latePlainResultIgnoredWhileHalfOpen() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy(distinctUsers: 1))
        failures(5, into: &breaker, at: 0)
        #expect(breaker.permit(at: at(1000)) == .probe)
        breaker.record(.success, probe: false, at: at(1001))
        #expect(breaker.phase(at: at(1001)) == .halfOpen)
        breaker.record(.failure(retryAfter: nil), probe: false, at: at(1002))
        #expect(breaker.phase(at: at(1002)) == .halfOpen)
        // A cancelled probe frees its slot without deciding anything.
        breaker.record(.inconclusive, probe: true, at: at(1003))
        #expect(breaker.phase(at: at(1003)) == .halfOpen)
        #expect(breaker.permit(at: at(1003)) == .probe)
        breaker.record(.success, probe: true, at: at(1004))
        #expect(breaker.state == .closed)
    }

    @Test("the policy's thresholds are honoured")
    func customPolicy() {
        let policy = CircuitBreakerPolicy(
            consecutiveFailures: 2, openDuration: .seconds(5), maxOpenDuration: .seconds(7), halfOpenProbes: 2, distinctUsers: 1)
        var breaker = CircuitBreaker(policy: policy)
        failures(2, into: &breaker, at: 0)
        #expect(breaker.state == .open(until: at(5000)))
        #expect(breaker.permit(at: at(5000)) == .probe)
        #expect(breaker.permit(at: at(5000)) == .probe)
        #expect(breaker.permit(at: at(5000)) == .reject(retryAfter: .seconds(5)))
        breaker.record(.failure(retryAfter: nil), probe: true, at: at(5001))
        #expect(breaker.state == .open(until: at(12_001)), "doubled, capped at 7 s")
    }

    @Test("Web Push and WNS are keyed by the allowed push service their endpoint's host falls under, the other platforms as a whole")
    func keys() {
        let policies = PushEndpointPolicies()
        let webPush = PushTarget(deviceID: UUID(), platform: .webpush, token: "https://Updates.Push.Services.Mozilla.com/wpush/v2/secret")
        #expect(CircuitKey(for: webPush, policies: policies) == CircuitKey(platform: .webpush, host: "push.services.mozilla.com"))
        #expect(CircuitKey(for: webPush, policies: policies).description == "webpush/push.services.mozilla.com")
        let wns = PushTarget(deviceID: UUID(), platform: .wns, token: "https://db5p.notify.windows.com/?token=secret")
        #expect(CircuitKey(for: wns, policies: policies) == CircuitKey(platform: .wns, host: "notify.windows.com"))
        let apns = PushTarget(deviceID: UUID(), platform: .apns, token: "abcdef")
        #expect(CircuitKey(for: apns, policies: policies) == CircuitKey(platform: .apns, host: nil))
        #expect(CircuitKey(for: apns, policies: policies).description == "apns")
        let garbage = PushTarget(deviceID: UUID(), platform: .webpush, token: "not a url")
        #expect(CircuitKey(for: garbage, policies: policies).host == "other")
        let foreign = PushTarget(deviceID: UUID(), platform: .webpush, token: "https://evil.example/push")
        #expect(CircuitKey(for: foreign, policies: policies).host == "other")
    }

    @Test("1,000 distinct endpoint hosts make no more keys than the allowlists have entries (plus other)")
    func keysAreBounded() {
        let policies = PushEndpointPolicies()
        var keys = Set<CircuitKey>()
        for index in 0..<1000 {
            let suffix = PushEndpointPolicies.defaultWebPushHosts[index % PushEndpointPolicies.defaultWebPushHosts.count]
            let webPush = PushTarget(deviceID: UUID(), platform: .webpush, token: "https://h\(index).x\(index).\(suffix)/push/\(index)")
            let wns = PushTarget(deviceID: UUID(), platform: .wns, token: "https://w\(index).notify.windows.com/?token=\(index)")
            keys.insert(CircuitKey(for: webPush, policies: policies))
            keys.insert(CircuitKey(for: wns, policies: policies))
        }
        #expect(keys.count == PushEndpointPolicies.defaultWebPushHosts.count + PushEndpointPolicies.defaultWNSHosts.count)
    }

    @Test("a snapshot encodes every field, nulls included, in snake_case")
    func snapshotJSON() throws {
        let snapshot = CircuitSnapshot(platform: "apns", host: nil, state: .halfOpen, openUntil: nil)
        let json = String(decoding: try CircuitSnapshot.encoder.encode([snapshot]), as: UTF8.self)
        #expect(json == #"[{"host":null,"open_until":null,"platform":"apns","state":"half_open"}]"#)
        let open = CircuitSnapshot(platform: "webpush", host: "push.example.com", state: .open, openUntil: Date(timeIntervalSince1970: 1_700_000_000))
        let decoded = try CircuitSnapshot.decoder.decode([CircuitSnapshot].self, from: CircuitSnapshot.encoder.encode([open, snapshot]))
        #expect(decoded == [open, snapshot])
    }

    func failures(_ count: Int, of user: String, into breaker: inout CircuitBreaker, at time: Int, retryAfter: Duration? = nil) {
        for _ in 0..<count { breaker.record(.failure(retryAfter: retryAfter), probe: false, source: user, at: at(time)) }
    }

    @Test("a push service's breaker ignores one user's failures, however many, Retry-After included; three users' open it")
    func distinctUsersBeforeOpening() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        #expect(breaker.policy.distinctUsers == 3)
        failures(500, of: "mallory", into: &breaker, at: 0)
        failures(5, of: "mallory", into: &breaker, at: 10, retryAfter: .seconds(60))
        #expect(breaker.state == .closed)
        #expect(breaker.permit(at: at(20)) == .send)
        #expect(breaker.failedUsers(at: at(20)) == 1)
        failures(1, of: "alice", into: &breaker, at: 30)
        #expect(breaker.state == .closed, "two users are not yet an outage")
        failures(1, of: "bob", into: &breaker, at: 40)
        #expect(breaker.state == .open(until: at(1040)), "the third user's failure opens it (more than five failures in a row)")
    }

    @Test("only users whose failures are inside the window count")
    func distinctUsersExpire() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        failures(1, of: "alice", into: &breaker, at: 0)
        failures(1, of: "bob", into: &breaker, at: 1000)
        breaker.record(.success, probe: false, source: "carol", at: at(9000))
        failures(10, of: "mallory", into: &breaker, at: 10_500)
        #expect(breaker.failedUsers(at: at(10_500)) == 2, "alice's failure is 10.5 s old")
        #expect(breaker.state == .closed)
        failures(1, of: "dave", into: &breaker, at: 10_600)
        #expect(breaker.phase(at: at(10_600)) == .open)
    }

    @Test("half-open, one user's failed probes do not re-open it: the next probe goes, and another user's success closes it")
    func distinctUsersWhileHalfOpen() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        for user in ["a", "b", "c", "d", "e"] { failures(1, of: user, into: &breaker, at: 0) }
        #expect(breaker.state == .open(until: at(1000)))
        for time in [1000, 1100, 1200] {
            #expect(breaker.permit(at: at(time)) == .probe)
            breaker.record(.failure(retryAfter: nil), probe: true, source: "mallory", at: at(time + 50))
            #expect(breaker.phase(at: at(time + 50)) == .halfOpen, "mallory's probe failures are his own")
        }
        #expect(breaker.permit(at: at(1300)) == .probe)
        breaker.record(.success, probe: true, source: "alice", at: at(1350))
        #expect(breaker.state == .closed)

        for user in ["a", "b", "c", "d", "e"] { failures(1, of: user, into: &breaker, at: 2000) }
        #expect(breaker.state == .open(until: at(3000)))
        for (offset, user) in ["a", "b", "c"].enumerated() {
            #expect(breaker.permit(at: at(3000 + offset * 10)) == .probe)
            breaker.record(.failure(retryAfter: nil), probe: true, source: user, at: at(3005 + offset * 10))
        }
        #expect(breaker.state == .open(until: at(3025 + 2000)), "three users' failed probes re-open it for twice as long")
    }

    func successes(of users: [String], into breaker: inout CircuitBreaker, at time: Int) {
        for user in users { breaker.record(.success, probe: false, source: user, at: at(time)) }
    }

    @Test("a group of failing accounts does not open a push service's breaker while more users are served; an outage of all does")
    func accountGroupsDoNotOpenIt() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        let victims = (1...10).map { "victim-\($0)" }
        // Five attacking accounts fail all along; ten other users' pushes go through between their failures.
        for round in 0..<20 {
            successes(of: victims, into: &breaker, at: round * 300)
            for attacker in 1...5 { failures(3, of: "attacker-\(attacker)", into: &breaker, at: round * 300 + 100) }
            #expect(breaker.state == .closed, "round \(round): 5 failing users against 10 served")
        }
        // Then the push service fails for everybody: each user's next push fails, and it opens.
        var time = 20 * 300
        for user in victims {
            time += 10
            failures(1, of: user, into: &breaker, at: time)
            if breaker.phase(at: at(time)) == .open { break }
        }
        #expect(breaker.phase(at: at(time)) == .open, "a real outage opens it within its users' next pushes")
        #expect(time <= 20 * 300 + 100, "after at most ten failed pushes: \(time)")
    }

    @Test("half-open, those whose failures opened it are not probes while others push; another user's success closes it")
    func suspectsDoNotProbe() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        // Four accounts' failures, the fifth in a row (m1's second) opens it: all four are suspects.
        for user in ["m1", "m2", "m3", "m4", "m1"] { failures(1, of: user, into: &breaker, at: 0) }
        #expect(breaker.phase(at: at(0)) == .open)
        // The attackers' held-back pushes come first: none of them is the probe.
        for user in ["m1", "m2", "m3", "m4"] {
            #expect(breaker.permit(at: at(1000), user: user) == .reject(retryAfter: .seconds(1)), "\(user)")
        }
        #expect(breaker.permit(at: at(1001), user: "victim") == .probe)
        breaker.record(.success, probe: true, source: "victim", at: at(1050))
        #expect(breaker.state == .closed)
    }

    @Test("half-open, a probe unanswered past the probe timeout frees its slot; with no one else pushing, a suspect probes")
    func hangingProbes() {
        var breaker = CircuitBreaker(policy: CircuitBreakerPolicy())
        for user in ["m1", "m2", "m3"] { failures(2, of: user, into: &breaker, at: 0) }
        #expect(breaker.permit(at: at(1000), user: "slow") == .probe)
        #expect(breaker.permit(at: at(1500), user: "victim") == .reject(retryAfter: .seconds(1)), "one probe at a time")
        #expect(breaker.permit(at: at(3000), user: "victim") == .probe, "the first probe is 2 s unanswered")
        // Nobody but the users who failed pushes: after the probe timeout one of them is probed (an outage among
        // few users still ends).
        var lone = CircuitBreaker(policy: CircuitBreakerPolicy())
        for user in ["a", "b", "c"] { failures(2, of: user, into: &lone, at: 0) }
        #expect(lone.permit(at: at(1000), user: "a") == .reject(retryAfter: .seconds(1)))
        #expect(lone.permit(at: at(3000), user: "a") == .probe)
        lone.record(.success, probe: true, source: "a", at: at(3050))
        #expect(lone.state == .closed)
    }
}

import Foundation
import SecurePushCore

/// The pipeline's health, as `/status` and `securepush status` show it. Holds no payload, token,
/// secret or user id.
public struct StatusReport: Codable, Sendable {
    /// Database reachability and schema.
    public struct Database: Codable, Sendable {
        public var reachable: Bool
        public var migrationsPending: [String]

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(reachable: Bool, migrationsPending: [String]) {
            self.reachable = reachable
            self.migrationsPending = migrationsPending
        }
    }

    /// Deliveries waiting or in flight for one platform.
    public struct PlatformQueue: Codable, Sendable {
        public var platform: String
        public var pending: Int64
        public var claimed: Int64
        /// Pending deliveries scheduled for a later retry.
        public var retrying: Int64
        /// Deliveries waiting for their time: a `deliver_at` or the end of their user's quiet hours.
        public var scheduled: Int64

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(platform: String, pending: Int64, claimed: Int64, retrying: Int64, scheduled: Int64) {
            self.platform = platform
            self.pending = pending
            self.claimed = claimed
            self.retrying = retrying
            self.scheduled = scheduled
        }
    }

    /// The hot queue.
    public struct Queue: Codable, Sendable {
        public var pending: Int64
        public var claimed: Int64
        /// Deliveries waiting for a `deliver_at` or the end of quiet hours (not yet claimable).
        public var scheduled: Int64
        /// Committed notifications that no dispatcher has fanned out into deliveries yet
        /// (`securepush.fan_out_queue`; each dispatcher's claim fans out first).
        public var awaitingFanOut: Int64
        /// Age of the oldest runnable pending delivery, or of the oldest notification awaiting its fan-out if
        /// older: the queue lag.
        public var oldestPendingAgeSeconds: Double?
        public var byPlatform: [PlatformQueue]

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(
            pending: Int64, claimed: Int64, scheduled: Int64, awaitingFanOut: Int64, oldestPendingAgeSeconds: Double?, byPlatform: [PlatformQueue]
        ) {
            self.pending = pending
            self.claimed = claimed
            self.scheduled = scheduled
            self.awaitingFanOut = awaitingFanOut
            self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
            self.byPlatform = byPlatform
        }
    }

    /// Stored notifications.
    public struct Notifications: Codable, Sendable {
        public var stored: Int64
        public var unread: Int64
        public var purged: Int64
        /// Notifications whose `deliver_at` is still ahead (not pushed, not readable yet).
        public var scheduled: Int64

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(stored: Int64, unread: Int64, purged: Int64, scheduled: Int64) {
            self.stored = stored
            self.unread = unread
            self.purged = purged
            self.scheduled = scheduled
        }
    }

    /// One dispatcher process.
    public struct Dispatcher: Codable, Sendable {
        /// The registration id, lowercase.
        public var id: String
        public var host: String
        public var pid: Int32
        public var role: String
        public var version: String
        public var startedAt: Date
        public var lastHeartbeatAt: Date
        /// Heartbeats arriving, late, or stopped.
        public var state: DispatcherState
        public var sent: Int64
        public var failed: Int64
        /// Its circuit breakers that are not closed, as of its last heartbeat (empty once stopped).
        public var circuits: [CircuitSnapshot]
        /// Whether its LISTEN connection was up at its last heartbeat (`nil`: not reported).
        public var listenerConnected: Bool?
        /// When its LISTEN connection last heard from the database, as of its last heartbeat.
        public var listenerHeardAt: Date?
        /// The platforms it pushes (empty: not reported, an older build).
        public var platforms: [String] = []

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(
            id: String, host: String, pid: Int32, role: String, version: String, startedAt: Date, lastHeartbeatAt: Date, state: DispatcherState,
            sent: Int64, failed: Int64, circuits: [CircuitSnapshot], listenerConnected: Bool?, listenerHeardAt: Date?, platforms: [String] = []
        ) {
            self.id = id
            self.host = host
            self.pid = pid
            self.role = role
            self.version = version
            self.startedAt = startedAt
            self.lastHeartbeatAt = lastHeartbeatAt
            self.state = state
            self.sent = sent
            self.failed = failed
            self.circuits = circuits
            self.listenerConnected = listenerConnected
            self.listenerHeardAt = listenerHeardAt
            self.platforms = platforms
        }
    }

    /// `ok`, or `degraded` with one reason per condition (`StatusThresholds`).
    public struct Health: Codable, Sendable, Equatable {
        /// `ok` or `degraded`.
        public var status: String
        /// What is wrong, one sentence each (empty when ok).
        public var reasons: [String]

        /// Creates a verdict.
        public init(status: String, reasons: [String]) {
            self.status = status
            self.reasons = reasons
        }
    }

    /// A circuit breaker that is open or half-open in an alive dispatcher.
    public struct OpenCircuit: Codable, Sendable, Hashable {
        /// The platform's name.
        public var platform: String
        /// The push service host (Web Push, WNS); `null` for a whole platform.
        @Nullable public var host: String?
        /// `open` or `half_open`.
        public var state: CircuitBreaker.Phase
        /// When an open breaker lets a probe through; `null` when half-open.
        @Nullable public var openUntil: Date?
        /// The dispatcher's registration id.
        public var dispatcher: String

        /// Creates an entry.
        public init(platform: String, host: String?, state: CircuitBreaker.Phase, openUntil: Date?, dispatcher: String) {
            self.platform = platform
            self.host = host
            self.state = state
            self.openUntil = openUntil
            self.dispatcher = dispatcher
        }
    }

    /// Finished deliveries in a window, by outcome.
    public struct Window: Codable, Sendable {
        public var sent: Int64 = 0
        public var failed: Int64 = 0
        public var tokenInvalid: Int64 = 0
        public var expired: Int64 = 0
        public var cancelled: Int64 = 0
        /// Replaced by a newer notification with the same collapse key before they were pushed.
        public var superseded: Int64 = 0

        /// Adds `count` deliveries that ended with `outcome` (a word of `delivery_log_outcome_valid`; others are ignored).
        public mutating func add(_ outcome: String, _ count: Int64) {
            switch DeliveryOutcome.Kind(rawValue: outcome) {
            case .sent: sent += count
            case .failed: failed += count
            case .tokenInvalid: tokenInvalid += count
            case .expired: expired += count
            case .cancelled: cancelled += count
            case .superseded: superseded += count
            case .retry, nil: break
            }
        }

        /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
        public init(sent: Int64 = 0, failed: Int64 = 0, tokenInvalid: Int64 = 0, expired: Int64 = 0, cancelled: Int64 = 0, superseded: Int64 = 0) {
            self.sent = sent
            self.failed = failed
            self.tokenInvalid = tokenInvalid
            self.expired = expired
            self.cancelled = cancelled
            self.superseded = superseded
        }
    }

    /// One platform's deliveries that finished in the last hour, by outcome (the history, `delivery_log`; the
    /// delivery events call `sent` "pushed" and `failed` and `token_invalid` "undelivered").
    public struct PlatformOutcomes: Codable, Sendable, Equatable {
        /// The platform's name.
        public var platform: String
        /// Accepted by the platform.
        public var sent: Int64
        /// Undelivered: the last attempt failed.
        public var failed: Int64
        /// Undelivered: the platform called the token invalid (the device was retired).
        public var tokenInvalid: Int64
        /// Not pushed before the notification expired.
        public var expired: Int64
        /// Cancelled before they were pushed (by a producer, or because their device was retired).
        public var cancelled: Int64
        /// Replaced by a newer notification with the same collapse key before they were pushed.
        public var superseded: Int64
        /// Of all these, the deliveries that took more than one attempt (retried at least once).
        public var retried: Int64

        /// A row with `outcomes`' counts.
        public init(platform: String, outcomes: Window, retried: Int64) {
            self.platform = platform
            self.sent = outcomes.sent
            self.failed = outcomes.failed
            self.tokenInvalid = outcomes.tokenInvalid
            self.expired = outcomes.expired
            self.cancelled = outcomes.cancelled
            self.superseded = outcomes.superseded
            self.retried = retried
        }

        /// The platform's six outcome counts as a `Window` (what `init` was given).
        public var window: Window {
            Window(sent: sent, failed: failed, tokenInvalid: tokenInvalid, expired: expired, cancelled: cancelled, superseded: superseded)
        }
    }

    /// Pushes a platform accepted in a window and whether the devices fetched them: the end-to-end health
    /// number (a broken extension, a demoted Android app or a dead credential shows as a falling ratio).
    public struct PlatformFetch: Codable, Sendable, Equatable {
        public var platform: String
        /// Pushes the platform accepted (outcome `sent`) in the window.
        public var accepted: Int64
        /// Of those, how many the device they went to has fetched.
        public var fetched: Int64
        /// `fetched / accepted`.
        public var fetchRatio: Double
        /// Median time from acceptance to the device's first fetch, over the fetched ones (`null` when none).
        @Nullable public var pushToFetchP50Seconds: Double?
        /// The 99th percentile of the same.
        @Nullable public var pushToFetchP99Seconds: Double?

        /// Creates a row.
        public init(
            platform: String, accepted: Int64, fetched: Int64, fetchRatio: Double, pushToFetchP50Seconds: Double?,
            pushToFetchP99Seconds: Double?
        ) {
            self.platform = platform
            self.accepted = accepted
            self.fetched = fetched
            self.fetchRatio = fetchRatio
            self.pushToFetchP50Seconds = pushToFetchP50Seconds
            self.pushToFetchP99Seconds = pushToFetchP99Seconds
        }
    }

    public var generatedAt: Date
    /// `ok` or `degraded`, and why.
    public var health = Health(status: "ok", reasons: [])
    public var database: Database
    public var queue: Queue
    public var notifications: Notifications
    public var dispatchers: [Dispatcher]
    /// Every open or half-open circuit breaker of the alive dispatchers: a provider is failing.
    public var openCircuits: [OpenCircuit]
    public var lastMinute: Window
    public var lastHour: Window
    /// Per platform with deliveries finished in the last hour: their outcomes (the platforms' rows add up to `lastHour`).
    public var outcomesLastHour: [PlatformOutcomes]
    /// Per platform with pushes accepted in the last hour: accepted, fetched, fetch ratio, push-to-fetch p50/p99.
    public var fetchLastHour: [PlatformFetch]
    /// Security events of the last hour by kind (`device_registered`, `device_retired`, `throttled`, ...).
    public var securityEventsLastHour: [String: Int64]
    /// The outcome feed and the webhook: how long an open transaction holds them back, and whose.
    public var feed = Feed()

    /// Creates a value (Store's `StatusStore` and `SupportStore` build them from their rows).
    public init(
        generatedAt: Date, health: Health = Health(status: "ok", reasons: []), database: Database, queue: Queue, notifications: Notifications,
        dispatchers: [Dispatcher], openCircuits: [OpenCircuit], lastMinute: Window, lastHour: Window, outcomesLastHour: [PlatformOutcomes],
        fetchLastHour: [PlatformFetch], securityEventsLastHour: [String: Int64], feed: Feed = Feed()
    ) {
        self.generatedAt = generatedAt
        self.health = health
        self.database = database
        self.queue = queue
        self.notifications = notifications
        self.dispatchers = dispatchers
        self.openCircuits = openCircuits
        self.lastMinute = lastMinute
        self.lastHour = lastHour
        self.outcomesLastHour = outcomesLastHour
        self.fetchLastHour = fetchLastHour
        self.securityEventsLastHour = securityEventsLastHour
        self.feed = feed
    }
}

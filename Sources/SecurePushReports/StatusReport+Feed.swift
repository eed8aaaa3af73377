import Foundation
import SecurePushCore

extension StatusReport {
    /// The producers' outcome feed (`securepush.events_after`) and the outcome webhook that reads it. The feed
    /// shows an event only once every transaction older than it has ended, so one transaction left open (a
    /// producer's, idle in a session) holds every producer's events and the webhook back: this says how long,
    /// and whose session it is.
    public struct Feed: Codable, Sendable {
        /// Age of the oldest committed event the feed does not show yet (`null`: none is held back).
        @Nullable public var heldSeconds: Double?
        /// The session whose open transaction holds the feed back (`null` when none does).
        @Nullable public var heldBy: Session?
        /// The outcome webhook (`null` when it has not run).
        @Nullable public var webhook: Webhook?

        /// A feed that nothing holds back and no webhook reads.
        public init(heldSeconds: Double? = nil, heldBy: Session? = nil, webhook: Webhook? = nil) {
            self.heldSeconds = heldSeconds
            self.heldBy = heldBy
            self.webhook = webhook
        }
    }

    /// A database session, as any login may see it in `pg_stat_activity` (no query text, no address).
    public struct Session: Codable, Sendable, Equatable {
        /// The server process id (`pg_terminate_backend(pid)` ends it).
        public var pid: Int32
        /// The login role.
        public var role: String
        /// Its `application_name`.
        public var application: String

        /// Creates an entry.
        public init(pid: Int32, role: String, application: String) {
            self.pid = pid
            self.role = role
            self.application = application
        }
    }

    /// Where the outcome webhook stands (`securepush.webhook_state`).
    public struct Webhook: Codable, Sendable {
        /// Age of the oldest event the feed shows and the webhook has not delivered (`null`: none waits).
        @Nullable public var lagSeconds: Double?
        /// Failed batches in a row.
        public var failures: Int32
        /// When a batch was last accepted.
        @Nullable public var lastSuccessAt: Date?

        /// Creates an entry.
        public init(lagSeconds: Double?, failures: Int32, lastSuccessAt: Date?) {
            self.lagSeconds = lagSeconds
            self.failures = failures
            self.lastSuccessAt = lastSuccessAt
        }
    }
}

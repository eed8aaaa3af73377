import Foundation
import SecurePushCore
import SecurePushStore

/// Failed-authentication throttling and the audit log: the seam between the HTTP handlers and
/// `SecurityStore` (SQL).
public protocol SecurityRepository: Sendable {
    /// How many seconds the longest block among `keys` has left (0: none).
    func blockedFor(_ keys: [String]) async throws -> Double
    /// Records a failed authentication under each key; returns the block it earned, in seconds.
    func recordFailure(_ keys: [String], policy: AuthThrottlePolicy) async throws -> Double
    /// Appends an audit event.
    func audit(_ event: AuditEvent, userID: String?, deviceID: UUID?, reason: String?) async throws
}

extension SecurityStore: SecurityRepository {}

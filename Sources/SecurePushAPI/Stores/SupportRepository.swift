import Foundation
import SecurePushReports
import SecurePushStore

/// The support lookup's reads: the seam between the support routes and `SupportStore` (SQL).
public protocol SupportRepository: Sendable {
    /// The timeline of notification `id` (`found` is false for an unknown id).
    func notification(_ id: UUID) async throws -> NotificationTimeline
    /// A device's recent history (`found` is false for an unknown id).
    func device(_ id: UUID) async throws -> DeviceTimeline
}

extension SupportStore: SupportRepository {}

/// A queued delivery's state word (`securepush.deliveries.state`, checked by `deliveries_state_valid` in
/// `sql/001_core_schema.sql`): waiting to be claimed, or held by a dispatcher's lease. A finished delivery leaves
/// the queue for `delivery_log`.
public enum DeliveryState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending
    case claimed
}

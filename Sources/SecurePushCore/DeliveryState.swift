/// A queued delivery's state word (`securepush.deliveries.state`, checked by `deliveries_state_valid`, last
/// redefined in `sql/016_delivery_controls.sql`): waiting for its time (deliver_at or the end of the user's
/// quiet hours), waiting to be claimed, or held by a dispatcher's lease. A finished delivery leaves the queue
/// for `delivery_log`.
public enum DeliveryState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not yet due: outside the claim index until `securepush.promote_due_deliveries` makes it pending.
    case scheduled
    case pending
    case claimed
}

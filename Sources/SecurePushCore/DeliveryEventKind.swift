/// An outcome event's word (`securepush.delivery_events.event`, checked by `delivery_events_event_valid`,
/// `sql/028_outcomes_and_traces.sql`): the changes of a notification's fate that a producer can follow with
/// `securepush.events_after` and `LISTEN securepush_events`.
public enum DeliveryEventKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A delivery to one device was created (detail `scheduled` while it waits for its time).
    case queued
    /// The platform accepted the push (detail: its message id, when it gives one).
    case pushed
    /// The device fetched the notification for the first time.
    case fetched
    /// Never delivered: the token was invalid, or the last attempt failed (detail says which).
    case undelivered
    /// The notification expired before it could be pushed.
    case expired
    /// The producer cancelled it before it was pushed.
    case cancelled
    /// A newer notification with the same collapse key replaced it.
    case superseded
    /// Its category is muted by the user: stored, never pushed (no device).
    case muted
}

/// Where one device's delivery of a probe stands (`securepush.notification_status`): still queued or held by a
/// dispatcher (the delivery's own state), finished (see its outcome), or never pushed (the device was not active).
public enum ProbeState: String, Sendable, Hashable, Codable, CaseIterable {
    case pending
    case claimed
    case finished
    case notPushed = "not_pushed"

}

/// A dispatcher process as `/status` sees it: heartbeats arriving, late (no heartbeat for the stale interval), or
/// stopped (it said so, or has been silent for twice the stale interval).
public enum DispatcherState: String, Sendable, Hashable, Codable, CaseIterable {
    case alive
    case stale
    case stopped
}

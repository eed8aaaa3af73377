import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Follows a simulated platform's outbox file (`SECUREPUSH_SIMULATED_OUTBOX`, one JSON line per push, appended
/// by every dispatcher) as `tail -f` does: each complete line once, in order, as soon as it is written.
struct OutboxTail {
    /// One push as the phone sees it: which device, which notification, and when the platform took it.
    struct Push: Decodable, Sendable {
        var deviceID: String
        var notificationID: String
        /// When the dispatcher recorded it (ISO 8601 with fractions).
        var time: String

        enum CodingKeys: String, CodingKey {
            case time
            case deviceID = "device_id"
            case notificationID = "notification_id"
        }
    }

    let path: String
    /// How long to wait for more bytes when the file has none (the file gives no signal of its own).
    var pause: Duration = .milliseconds(2)

    /// Calls `body` with every push until it returns false or the task is cancelled; waits for the file to exist.
    func follow(_ body: (Push) -> Bool) async throws {
        var descriptor: Int32 = -1
        while descriptor < 0 {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0 { try await Task.sleep(for: pause) }
        }
        defer { close(descriptor) }
        let decoder = JSONDecoder()
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            try Task.checkCancellation()
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 {
                try await Task.sleep(for: pause)
                continue
            }
            pending.append(contentsOf: chunk[0..<count])
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                let line = pending[start..<newline]
                start = newline + 1
                guard let push = try? decoder.decode(Push.self, from: Data(line)) else { continue }
                if !body(push) { return }
            }
            pending.removeFirst(start)
        }
    }
}

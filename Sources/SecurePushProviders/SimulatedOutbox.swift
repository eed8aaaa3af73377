import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One push as the simulated platform recorded it.
public struct SimulatedPush: Sendable, Hashable, Codable {
    /// Always `simulated`.
    public var platform: String
    /// The device id.
    public var deviceID: String
    /// The push token.
    public var token: String
    /// The notification id (the only thing the body carries).
    public var notificationID: String
    /// HTTP method.
    public var method: String
    /// Request path.
    public var path: String
    /// Headers exactly as they would be sent.
    public var headers: [WireHeader]
    /// The body exactly as it would be sent.
    public var body: String
    /// When it was recorded (ISO 8601).
    public var time: String

    enum CodingKeys: String, CodingKey {
        case platform, token, method, path, headers, body, time
        case deviceID = "device_id"
        case notificationID = "notification_id"
    }
}

/// Where simulated pushes go: one JSON line each to a file (`SECUREPUSH_SIMULATED_OUTBOX`), and
/// optionally kept in memory for tests.
public final class SimulatedOutbox: Sendable {
    private let fileDescriptor: Int32?
    private let keepInMemory: Bool
    private let recorded = NIOLockedValueBox<[SimulatedPush]>([])

    /// Opens (appending) the outbox file, if any; `keepInMemory` keeps every push for `pushes`.
    public init(path: String?, keepInMemory: Bool = false) throws {
        if let path, !path.isEmpty {
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw SimulatedOutboxError(message: "SECUREPUSH_SIMULATED_OUTBOX: cannot open \(path) for appending (errno \(errno))")
            }
            self.fileDescriptor = fd
        } else {
            self.fileDescriptor = nil
        }
        self.keepInMemory = keepInMemory
    }

    deinit {
        if let fileDescriptor { close(fileDescriptor) }
    }

    /// Everything recorded in memory so far.
    public var pushes: [SimulatedPush] {
        recorded.withLockedValue { $0 }
    }

    /// Whether anything is recorded at all (a file or memory).
    var isRecording: Bool { fileDescriptor != nil || keepInMemory }

    func record(_ push: SimulatedPush) {
        if keepInMemory {
            recorded.withLockedValue { $0.append(push) }
        }
        guard let fileDescriptor, var line = try? JSONEncoder.outbox.encode(push) else { return }
        line.append(0x0A)
        line.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }
}

/// The outbox file could not be opened.
public struct SimulatedOutboxError: Error, CustomStringConvertible {
    /// What went wrong, naming the setting.
    public var message: String
    public var description: String { message }
}

extension JSONEncoder {
    static let outbox: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

import Foundation
import SecurePushFakes

/// One push request a fake received, read from the wire: which device, which notification id, when,
/// what the fake answered, and which SecurePush process sent it (when the request says so).
struct PushAttempt: Sendable {
    var platform: ChaosPlatform
    /// The device as the fake sees it (see `ChaosDevice.key`).
    var deviceKey: String
    /// The notification id the push carried, `nil` when it could not be read.
    var notification: UUID?
    var receivedAt: Date
    /// The answer's status, `nil` when stalled.
    var status: Int?
    /// The answer's `Retry-After` in seconds.
    var retryAfter: Double?
    /// The index of the sending process, when the request names it.
    var sender: Int?
    /// A read-sync clear (`secureClear`: the user read these elsewhere), not a notification's push.
    var isClear = false

    /// Whether the fake accepted the push (the device would get it).
    var accepted: Bool { status.map { (200...299).contains($0) } ?? false }

    /// Every push request the fakes received (token requests left out), in arrival order per platform.
    static func collect(from fakes: ProviderFakes, devices: [String: ChaosDevice]) -> [PushAttempt] {
        var attempts: [PushAttempt] = []
        for platform in ChaosPlatform.allCases {
            for exchange in fakes.server(platform).traffic.exchanges {
                if let attempt = read(exchange, platform: platform, fakes: fakes, devices: devices) { attempts.append(attempt) }
            }
        }
        return attempts
    }

    private static func read(_ exchange: FakeExchange, platform: ChaosPlatform, fakes: ProviderFakes, devices: [String: ChaosDevice])
        -> PushAttempt?
    {
        let request = exchange.request
        var attempt = PushAttempt(
            platform: platform, deviceKey: "", notification: nil, receivedAt: exchange.receivedAt, status: exchange.status,
            retryAfter: exchange.retryAfter.flatMap { Double($0) }, sender: fakes.sender(of: request, platform: platform))
        switch platform {
        case .apns:
            guard request.path.hasPrefix("/3/device/") else { return nil }
            attempt.deviceKey = String(request.path.dropFirst("/3/device/".count)).lowercased()
            attempt.notification = secureID(inJSON: request.body)
            attempt.isClear = isClear(request.body)
        case .fcm:
            guard request.path.hasSuffix(":send") else { return nil }
            let message = (try? JSONSerialization.jsonObject(with: request.body) as? [String: Any])?["message"] as? [String: Any]
            attempt.deviceKey = message?["token"] as? String ?? ""
            let data = message?["data"] as? [String: Any]
            attempt.notification = (data?["secureId"] as? String).flatMap(UUID.init(uuidString:))
            attempt.isClear = data?["secureClear"] != nil
        case .wns:
            guard request.path.hasPrefix("/w/") else { return nil }
            attempt.deviceKey = request.path
            let body = String(decoding: request.body, as: UTF8.self)
            attempt.notification = UUID(uuidString: body)
            attempt.isClear = body.hasPrefix("clear:")
        case .webpush:
            guard request.path.hasPrefix("/push/") else { return nil }
            attempt.deviceKey = request.path
            if attempt.accepted, let plaintext = try? devices[request.path]?.decryptor?.decrypt(request.body) {
                // What the browser would read.
                attempt.notification = secureID(inJSON: plaintext)
                attempt.isClear = isClear(plaintext)
            } else if let topic = request.header("topic") {
                attempt.notification = uuid(fromHex: topic)
            }
        }
        return attempt
    }

    private static func isClear(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["secureClear"] != nil
    }

    /// `secureId` at the top (APNs) or in a Declarative Web Push message's `notification.data`.
    private static func secureID(inJSON data: Data) -> UUID? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        let declarative = ((object["notification"] as? [String: Any])?["data"] as? [String: Any])?["secureId"]
        return ((object["secureId"] ?? declarative) as? String).flatMap(UUID.init(uuidString:))
    }

    private static func uuid(fromHex hex: String) -> UUID? {
        guard hex.count == 32 else { return nil }
        let characters = Array(hex)
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
        return UUID(uuidString: groups.joined(separator: "-"))
    }
}

import Foundation
import SecurePushCore
import SecurePushServer
import SecurePushStore

/// A readable rendering of a probe's report: one line per device.
struct ProbeTable {
    let report: Probe.Report
    let timeout: Duration

    func render() -> String {
        var lines = ["probe \(report.notificationID.uuidString.lowercased()): \(report.devices.count) device(s)"]
        guard !report.devices.isEmpty else {
            lines.append("the user has no active device: nothing was pushed")
            return lines.joined(separator: "\n")
        }
        lines.append(row("device", "platform", "outcome", "accepted after", "fetched after"))
        for device in report.devices {
            let outcome =
                switch (device.state, device.outcome) {
                case (.finished, let outcome?): outcome.rawValue
                case (.pending, _) where device.attempts > 0: "retrying (attempt \(device.attempts))"
                default: device.state.rawValue
                }
            lines.append(
                row(
                    device.deviceID.uuidString.lowercased(), device.platform, outcome, device.acceptedAfter.map(Self.format) ?? "not accepted",
                    device.fetchedAfter.map(Self.format) ?? "not fetched"))
            if device.outcome != .sent, let error = device.lastError {
                lines.append("    last error: \(error)")
            }
        }
        if !report.settled {
            lines.append("(timed out after \(Self.format(timeout)) with devices still unsettled)")
        }
        return lines.joined(separator: "\n")
    }

    private func row(_ columns: String...) -> String {
        let widths = [38, 11, 26, 16, 0]
        return zip(columns, widths).map { text, width in
            text.count >= width ? text + (width > 0 ? " " : "") : text + String(repeating: " ", count: width - text.count)
        }.joined().trimmingCharacters(in: .whitespaces)
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.3f s", duration.secondsDouble)
    }
}

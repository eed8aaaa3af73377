import Foundation

/// This process's resident memory as Linux reports it in `/proc/self/status`.
enum ProcessMemory {
    /// Resets the peak (`VmHWM`) to the current resident size, so a later `peakKB()` covers only what
    /// follows (writing 5 to `/proc/self/clear_refs`). Returns false where that is not possible.
    @discardableResult
    static func resetPeak() -> Bool {
        FileManager.default.isWritableFile(atPath: "/proc/self/clear_refs")
            && (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
    }

    /// The peak resident set size in KiB (`VmHWM`), or nil off Linux.
    static func peakKB() -> Int? {
        field("VmHWM")
    }

    private static func field(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return nil
    }
}

import Foundation

extension Int {
    /// `value` rounded down and clamped to `Int`'s range (NaN becomes 0): a conversion that never traps, for
    /// numbers that come from a wire or a database (an expiry of `Int64.max` seconds, a date of `infinity`).
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Int.max) {
            self = .max
        } else if value <= Double(Int.min) {
            self = .min
        } else {
            self = Int(value.rounded(.down))
        }
    }
}

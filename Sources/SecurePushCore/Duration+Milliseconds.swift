extension Duration {
    /// The duration in whole milliseconds, rounded down.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole microseconds, rounded down.
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// The duration in whole nanoseconds, rounded down and clamped to `Int64`'s range (an hour-long deadline and
    /// `Duration.seconds(.max)` alike never trap).
    public var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, carry) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return carry ? (seconds < 0 ? .min : .max) : sum
    }

    /// The duration in seconds as a floating-point number.
    public var secondsDouble: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Percentiles of a sample (nearest rank on the sorted values).
struct Percentiles {
    private let sorted: [Double]

    init(_ values: [Double]) {
        self.sorted = values.sorted()
    }

    /// The value below which `fraction` of the sample lies; NaN for an empty sample.
    func callAsFunction(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }
}

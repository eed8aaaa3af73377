import Metrics
import SecurePushCore

/// `securepush_sealed_pushes_total{platform, preview}`: pushes a platform accepted with a seal
/// (`SECUREPUSH_SEALED_PREVIEWS=on`), by what the seal carried: `sealed` (the preview), `too_large` (a
/// preview that did not fit its bucket and stayed home) or `none` (the notification had no preview). Counts,
/// never content. Web Push's bucket holds any preview the database accepts, so it has no `too_large`.
struct SealedPushCounters: Sendable {
    /// What a sealed push carried.
    enum Preview: String, CaseIterable, Sendable {
        case sealed
        case tooLarge = "too_large"
        case none
    }

    private let counters: [Platform: [Preview: Counter]]

    init() {
        counters = Dictionary(
            uniqueKeysWithValues: Platform.allCases.map { platform in
                let byPreview = Dictionary(
                    uniqueKeysWithValues: Preview.allCases.map {
                        (
                            $0,
                            Counter(label: "securepush_sealed_pushes_total", dimensions: [("platform", platform.rawValue), ("preview", $0.rawValue)])
                        )
                    })
                return (platform, byPreview)
            })
    }

    /// Counts `push`, accepted by its platform, when it was sealed.
    func record(_ push: Push) {
        guard case .notify = push.kind, let seal = push.seal else { return }
        let preview: Preview
        if seal.previewJSON == nil {
            preview = .none
        } else if push.target.platform.sealsItsOwnMessage || seal.previewFits {
            preview = .sealed
        } else {
            preview = .tooLarge
        }
        counters[push.target.platform]?[preview]?.increment()
    }
}

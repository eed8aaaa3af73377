import Foundation
import SecurePushCore
import Testing

@Suite("Id-only by construction")
struct PushTypeTests {
    @Test("the type that reaches a provider has no field that could hold a payload")
    func pushHasNoPayloadField() {
        let push = Push(
            notificationID: NotificationID(UUID()),
            target: PushTarget(deviceID: UUID(), platform: .simulated, token: "t"),
            expiresAt: Date()
        )
        let labels = Mirror(reflecting: push).children.compactMap(\.label)
        // `urgency` is a fixed word and `collapseID` a 32-hex-digit digest computed in the database: neither can hold content.
        // `seal` holds the producer-approved preview (never the payload), which the envelopes only put on the wire sealed
        // to the device (SealedPreviewTests: no preview byte in any capture); it is nil unless SECUREPUSH_SEALED_PREVIEWS=on.
        // `quarantined` is a flag the dispatcher sets (which connection carries the push), never content.
        #expect(
            labels.sorted() == [
                "attempt", "badge", "collapseID", "expiresAt", "kind", "notificationID", "priority", "quarantined", "seal", "target", "urgency",
            ])
        #expect(push.seal == nil, "id-only unless the claim seals")
        let seal = PushSeal(previewJSON: "{}", key: nil)
        // `sealed`: a value a self-hosted server already sealed to the device, as a push relay receives it
        // (ciphertext of fixed size; RelayEndToEndTests opens it with the device's key only).
        #expect(Mirror(reflecting: seal).children.compactMap(\.label).sorted() == ["key", "previewJSON", "sealed"])
        #expect(Mirror(reflecting: push.urgency).children.isEmpty, "an enum without associated values")
        let targetLabels = Mirror(reflecting: push.target).children.compactMap(\.label)
        #expect(targetLabels.sorted() == ["deviceID", "options", "platform", "token"])
    }
}

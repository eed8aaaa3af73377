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
        #expect(labels.sorted() == ["attempt", "badge", "expiresAt", "kind", "notificationID", "priority", "target"])
        let targetLabels = Mirror(reflecting: push.target).children.compactMap(\.label)
        #expect(targetLabels.sorted() == ["deviceID", "options", "platform", "token"])
    }
}

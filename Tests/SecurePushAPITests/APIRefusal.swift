import Testing

@testable import SecurePushAPI

/// The `APIError` that `parse` refuses `input` with, or `nil` when it parses. Any other error is recorded
/// as an issue (a parser must answer with a precise `APIError`, never anything else).
func apiRefusal(_ input: String, _ parse: () throws -> Void) -> APIError? {
    do {
        try parse()
        return nil
    } catch let error as APIError {
        return error
    } catch {
        Issue.record("\(input): not an APIError: \(error)")
        return nil
    }
}

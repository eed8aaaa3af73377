import HTTPTypes

extension HTTPField.Name {
    /// `X-Forwarded-For` (the client behind a trusted proxy: `ClientAddress`).
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}

/// An optional that JSON always carries: `null` when absent, never left out, so a document's shape is fixed
/// (clients and schemas see every key). The one rule for such fields: mark them `@Nullable` and let `Codable` be
/// synthesized, instead of writing an encoder to say `null`.
@propertyWrapper
public struct Nullable<Value> {
    public var wrappedValue: Value?

    /// Wraps a value.
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }
}

extension Nullable: Sendable where Value: Sendable {}
extension Nullable: Equatable where Value: Equatable {}
extension Nullable: Hashable where Value: Hashable {}

extension Nullable: Encodable where Value: Encodable {
    /// Encodes the value, or `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension Nullable: Decodable where Value: Decodable {
    /// Decodes the value, or `nil` for `null`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self.wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// A missing key decodes as `nil`, as it would for a plain optional.
    public func decode<Value: Decodable>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        try decodeIfPresent(type, forKey: key) ?? Nullable(wrappedValue: nil)
    }
}

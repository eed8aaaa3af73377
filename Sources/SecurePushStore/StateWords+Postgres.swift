import NIOCore
import PostgresNIO
import SecurePushCore

/// A state word bound to SQL as `text` by its raw value, so a statement names it through its type and a word the
/// database returns that this build does not know fails the decode instead of passing as text. (The words are also
/// `Codable` for JSON; these implementations settle which of PostgresNIO's defaults applies: text, not JSON.)
public protocol StateWord: RawRepresentable<String>, PostgresCodable {}

extension StateWord {
    public static var psqlType: PostgresDataType { String.psqlType }
    public static var psqlFormat: PostgresFormat { String.psqlFormat }

    public func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        rawValue.encode(into: &byteBuffer, context: context)
    }

    public init<JSONDecoder: PostgresJSONDecoder>(
        from buffer: inout ByteBuffer, type: PostgresDataType, format: PostgresFormat, context: PostgresDecodingContext<JSONDecoder>
    ) throws {
        guard let word = Self(rawValue: try String(from: &buffer, type: type, format: format, context: context)) else {
            throw PostgresDecodingError.Code.failure
        }
        self = word
    }
}

extension DeliveryState: StateWord {}
extension DispatcherState: StateWord {}
extension ProbeState: StateWord {}
extension Urgency: StateWord {}
extension DeliveryOutcome.Kind: StateWord {}

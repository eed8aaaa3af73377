import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOFoundationEssentialsCompat
import SecurePushAPI
import SecurePushClient
import Testing

/// Checks responses against the API contract (`docs/openapi.json`): the status is documented for the
/// operation, documented headers are present, and the JSON body satisfies the schema. A small JSON
/// Schema subset: `$ref`, `type` (one or several), `required`, `properties`, `additionalProperties`,
/// `enum`, `const`, `items`, `minLength`, `maxLength`, `minimum`, `maximum`, `pattern`, `oneOf`.
public enum OpenAPIValidator {
    static let document: JSONValue = (try? JSONDecoder().decode(JSONValue.self, from: OpenAPIDocument.data)) ?? .null

    /// The problems of `response` to `method path`, empty when it conforms. Router-level 404s and 405s of
    /// paths or methods the contract does not list are not the contract's business and are skipped.
    public static func problems(method: HTTPRequest.Method, path: String, response: TestResponse) -> [String] {
        problems(method: method, path: path, status: response.status, headers: response.headers, body: response.body)
    }

    /// `problems(method:path:response:)` for a response given by its parts.
    public static func problems(method: HTTPRequest.Method, path: String, status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer)
        -> [String]
    {
        let path = String(path.prefix { $0 != "?" })
        guard let template = OpenAPIDocument.template(for: path),
            let operation = document["paths"]?[template]?[method.rawValue.lowercased()]
        else { return [] }
        let label = "\(method) \(template) → \(status.code)"
        guard let declared = operation["responses"]?[String(status.code)].map(resolve) else {
            return ["\(label): status not documented"]
        }
        var problems: [String] = []
        for name in declared["headers"]?.objectKeys ?? [] where headers[HTTPField.Name(name)!] == nil {
            problems.append("\(label): documented header \(name) missing")
        }
        let documented = declared["content"]?.objectKeys ?? []
        guard !documented.isEmpty else { return problems }
        // The body is checked against the media type the response says it is, which must be documented.
        let mediaType = headers[.contentType].flatMap { $0.split(separator: ";").first }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard let mediaType, documented.contains(mediaType) else {
            return problems + ["\(label): content type \(mediaType ?? "(none)") not documented (\(documented.sorted().joined(separator: ", ")))"]
        }
        if mediaType == "application/json", let schema = declared["content"]?["application/json"]?["schema"] {
            guard let body = try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)) else {
                return problems + ["\(label): body is not JSON"]
            }
            problems += validate(body, against: schema, at: "\(label) body")
        }
        return problems
    }

    static func resolve(_ node: JSONValue) -> JSONValue {
        guard case .string(let reference)? = node["$ref"], reference.hasPrefix("#/") else { return node }
        var current = document
        for part in reference.dropFirst(2).split(separator: "/") {
            current = current[String(part)] ?? .null
        }
        return resolve(current)
    }

    static func validate(_ value: JSONValue, against schemaNode: JSONValue, at location: String) -> [String] {
        let schema = resolve(schemaNode)
        guard case .object = schema else { return [] }
        if case .array(let choices)? = schema["oneOf"] {
            let matching = choices.filter { validate(value, against: $0, at: location).isEmpty }.count
            if matching != 1 { return ["\(location): \(value.shape) matches \(matching) of oneOf's \(choices.count) schemas, not exactly 1"] }
        }
        let types: [String]
        switch schema["type"] {
        case .string(let type)?: types = [type]
        case .array(let list)?: types = list.compactMap(\.stringValue)
        default: types = []
        }
        if !types.isEmpty, !types.contains(where: value.isType) {
            return ["\(location): expected \(types.joined(separator: "|")), got \(value.shape)"]
        }
        var problems: [String] = []
        if case .array(let allowed)? = schema["enum"], !allowed.contains(value) {
            problems.append("\(location): \(value.shape) is not one of \(allowed.map(\.shape))")
        }
        if let constant = schema["const"], constant != value {
            problems.append("\(location): \(value.shape) is not \(constant.shape)")
        }
        switch value {
        case .string(let string):
            if case .number(let minimum)? = schema["minLength"], Double(string.count) < minimum { problems.append("\(location): too short") }
            if case .number(let maximum)? = schema["maxLength"], Double(string.count) > maximum { problems.append("\(location): too long") }
            if case .string(let pattern)? = schema["pattern"], string.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(location): does not match \(pattern)")
            }
        case .number(let number):
            if case .number(let minimum)? = schema["minimum"], number < minimum { problems.append("\(location): below \(minimum)") }
            if case .number(let maximum)? = schema["maximum"], number > maximum { problems.append("\(location): above \(maximum)") }
        case .object(let object):
            if case .array(let required)? = schema["required"] {
                for key in required.compactMap(\.stringValue) where object[key] == nil {
                    problems.append("\(location): required \(key) missing")
                }
            }
            for (key, item) in object {
                if let property = schema["properties"]?[key] {
                    problems += validate(item, against: property, at: "\(location).\(key)")
                } else if case .bool(false)? = schema["additionalProperties"] {
                    problems.append("\(location): unexpected property \(key)")
                } else if let additional = schema["additionalProperties"], case .object = additional {
                    problems += validate(item, against: additional, at: "\(location).\(key)")
                }
            }
        case .array(let items):
            if let itemSchema = schema["items"] {
                for (index, item) in items.enumerated() {
                    problems += validate(item, against: itemSchema, at: "\(location)[\(index)]")
                }
            }
        default:
            break
        }
        return problems
    }
}

/// What the contract check needs of a JSON value (the client kit's `JSONValue` keeps booleans and
/// numbers apart, as JSON Schema does).
extension JSONValue {
    var objectKeys: [String] {
        if case .object(let object) = self { return Array(object.keys) }
        return []
    }

    func isType(_ type: String) -> Bool {
        switch (self, type) {
        case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"), (.object, "object"), (.number, "number"): true
        case (.number(let number), "integer"): number.rounded() == number
        default: false
        }
    }

    /// The value in a problem line: scalars as they are, containers by their size or keys.
    var shape: String {
        switch self {
        case .null: "null"
        case .bool(let bool): "\(bool)"
        case .number(let number): "\(number)"
        case .string(let string): "\"\(string)\""
        case .array(let array): "[\(array.count) items]"
        case .object(let object): "{\(object.keys.sorted().joined(separator: ", "))}"
        }
    }
}

/// A test client that checks every response against the contract and records an issue for each mismatch,
/// so every API test also tests the document.
public struct ContractCheckingClient: TestClientProtocol {
    let client: any TestClientProtocol

    public init(_ client: any TestClientProtocol) {
        self.client = client
    }

    public var port: Int? { client.port }

    public func executeRequest(uri: String, method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer?) async throws -> TestResponse {
        let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
        for problem in OpenAPIValidator.problems(method: method, path: uri, response: response) {
            Issue.record("response breaks docs/openapi.json: \(problem)")
        }
        return response
    }
}

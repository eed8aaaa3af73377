import Foundation

/// `--name value` pairs (and one leading positional value) from the command line.
struct BenchArguments {
    /// The first argument when it is not an option (the fake's directory).
    var positional: String?
    private var values: [String: String] = [:]

    init(_ arguments: ArraySlice<String>) throws {
        var remaining = arguments[...]
        if let first = remaining.first, !first.hasPrefix("--") {
            positional = first
            remaining = remaining.dropFirst()
        }
        while let name = remaining.first {
            guard name.hasPrefix("--"), remaining.count >= 2 else { throw BenchError("expected --name value, got \(name)") }
            values[String(name.dropFirst(2))] = remaining.dropFirst().first
            remaining = remaining.dropFirst(2)
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = values[name] else { throw BenchError("--\(name) is required") }
        return value
    }

    func int(_ name: String, default value: Int) throws -> Int {
        guard let raw = values[name] else { return value }
        guard let parsed = Int(raw), parsed > 0 else { throw BenchError("--\(name) must be a positive integer, got \(raw)") }
        return parsed
    }
}

/// A usage or set-up error, printed as is.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

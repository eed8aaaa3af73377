import Foundation

/// A throw-away CA and a server certificate for 127.0.0.1/localhost, made with `/usr/bin/openssl`
/// in a temporary directory. Trust `caFile` in clients; serve `certificateFile`/`keyFile`.
public struct TestCertificateAuthority: Sendable {
    /// PEM of the CA certificate.
    public let caFile: String
    /// PEM of the server certificate (SAN IP:127.0.0.1, DNS:localhost).
    public let certificateFile: String
    /// PEM of the server's private key.
    public let keyFile: String
    /// The directory holding the files.
    public let directory: String

    /// One CA per test process (making keys costs time on a shared machine).
    public static let shared: Result<TestCertificateAuthority, any Error> = Result { try TestCertificateAuthority() }

    /// Creates a new CA and server certificate.
    public init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let ext = directory + "/server.ext"
        try """
        subjectAltName=IP:127.0.0.1,DNS:localhost
        basicConstraints=CA:FALSE
        keyUsage=critical,digitalSignature
        extendedKeyUsage=serverAuth
        """.write(toFile: ext, atomically: true, encoding: .utf8)
        try Shell.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", directory + "/ca.key", "-out", directory + "/ca.pem", "-days", "3", "-subj", "/CN=SecurePush Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        try Shell.run(
            "/usr/bin/openssl",
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", directory + "/server.key", "-out", directory + "/server.csr", "-subj", "/CN=127.0.0.1",
            ])
        try Shell.run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", directory + "/server.csr", "-CA", directory + "/ca.pem", "-CAkey", directory + "/ca.key",
                "-CAcreateserial", "-out", directory + "/server.pem", "-days", "3", "-extfile", ext,
            ])
        self.directory = directory
        self.caFile = directory + "/ca.pem"
        self.certificateFile = directory + "/server.pem"
        self.keyFile = directory + "/server.key"
    }
}

/// Runs a program and waits; throws with its stderr when it fails.
public enum Shell {
    /// Output of a finished program.
    public struct Output: Sendable {
        /// Exit status.
        public var status: Int32
        /// Standard output.
        public var stdout: String
        /// Standard error.
        public var stderr: String
    }

    /// Runs `program` with `arguments`, feeding `input` on stdin; throws if it exits non-zero.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], input: Data? = nil) throws -> Output {
        let output = try capture(program, arguments, input: input)
        guard output.status == 0 else {
            throw ShellError(message: "\(program) \(arguments.first ?? "") exited with \(output.status): \(output.stderr)")
        }
        return output
    }

    /// Runs `program` and returns whatever it did.
    public static func capture(_ program: String, _ arguments: [String], input: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(input) }
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }
}

/// A helper program failed.
public struct ShellError: Error, CustomStringConvertible {
    /// What failed.
    public var message: String
    public var description: String { message }
}

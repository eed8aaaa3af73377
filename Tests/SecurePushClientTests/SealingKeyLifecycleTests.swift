import Foundation
import SecurePushClient
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Answers the device endpoints as the API documents them and records every request, per host (one per test).
final class DeviceAPIStub: URLProtocol {
    struct Exchange {
        var method: String
        var path: String
        var body: [String: Any]?
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var exchanges: [String: [Exchange]] = [:]

    /// A client whose requests to a host of its own go to this stub.
    static func client(_ credentials: any CredentialStore) -> (SecurePushClient, @Sendable () -> [Exchange]) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [DeviceAPIStub.self]
        let host = "\(UUID().uuidString.lowercased()).example"
        let client = SecurePushClient(
            baseURL: URL(string: "https://\(host)/")!, credentials: credentials, session: URLSession(configuration: configuration))
        return (client, { lock.withLock { exchanges[host] ?? [] } })
    }

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }
    override func stopLoading() {}

    override func startLoading() {
        let method = request.httpMethod ?? "GET"
        let path = request.url?.path ?? ""
        let body = (request.httpBody ?? request.httpBodyStream.map(Self.read)).flatMap { try? JSONSerialization.jsonObject(with: $0) }
        Self.lock.withLock {
            Self.exchanges[request.url?.host ?? "", default: []].append(Exchange(method: method, path: path, body: body as? [String: Any]))
        }
        let (status, answer): (Int, String) =
            switch (method, path) {
            case ("POST", "/v1/devices"): (201, #"{"device_id":"\#(UUID())","device_secret":"first"}"#)
            case ("POST", "/v1/devices/current/rotate"):
                (200, #"{"device_id":"\#(UUID())","device_secret":"second","sealing":\#(body.map { _ in "true" } ?? "false")}"#)
            case ("PUT", "/v1/devices/current/sealing-key"), ("DELETE", "/v1/devices/current/sealing-key"): (204, "")
            default: (404, #"{"error":{"code":"not_found","message":""}}"#)
            }
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: "HTTP/1.1", headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(answer.utf8))
        client?.urlProtocolDidFinishLoading(self)
    }

    private static func read(_ stream: InputStream) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        stream.open()
        defer { stream.close() }
        while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 { data.append(contentsOf: buffer[..<count]) }
        return data
    }
}

@Suite("SecurePushClient: the sealing key's lifecycle")
struct SealingKeyLifecycleTests {
    /// The `sealing_key` object as the client sent it must be the stored key's public parts.
    func expectSent(_ sent: Any?, is key: SealingKey?) throws {
        let json = try #require(sent as? [String: String])
        let key = try #require(key)
        #expect(json == ["p256dh": key.publicKeyBase64URL, "auth": key.authBase64URL])
    }

    @Test("register sends a new sealing key and stores it with the credential; Web Push registers none")
    func register() async throws {
        let store = InMemoryCredentialStore()
        let (client, exchanges) = DeviceAPIStub.client(store)
        let credential = try await client.register(.apns(token: Data([1, 2])), userToken: "jwt")
        #expect(try store.load() == credential && credential.secret == "first")
        let body = try #require(exchanges().first?.body)
        try expectSent(body["sealing_key"], is: credential.sealingKey)
        #expect(body["platform"] as? String == "apns")

        let webStore = InMemoryCredentialStore()
        let (web, webExchanges) = DeviceAPIStub.client(webStore)
        let webCredential = try await web.register(.webPush(endpoint: "https://e", p256dh: "p", auth: "a"), userToken: "jwt")
        #expect(webCredential.sealingKey == nil && webExchanges().first?.body?["sealing_key"] == nil)
    }

    @Test("rotate sends and stores a fresh key; a device without one rotates with no body")
    func rotate() async throws {
        let old = SealingKey.generate()
        let store = InMemoryCredentialStore(DeviceCredential(deviceID: UUID(), secret: "old", sealingKey: old))
        let (client, exchanges) = DeviceAPIStub.client(store)
        let rotated = try await client.rotate()
        #expect(rotated.secret == "second" && rotated.sealingKey != nil && rotated.sealingKey != old)
        #expect(try store.load() == rotated)
        try expectSent(exchanges().first?.body?["sealing_key"], is: rotated.sealingKey)

        let keyless = InMemoryCredentialStore(DeviceCredential(deviceID: UUID(), secret: "old"))
        let (plain, plainExchanges) = DeviceAPIStub.client(keyless)
        #expect(try await plain.rotate().sealingKey == nil)
        #expect(plainExchanges().first.map { $0.method == "POST" && $0.body == nil } == true)
    }

    @Test("setSealingKey PUTs a new key and stores it; clearSealingKey DELETEs it and forgets it")
    func setAndClear() async throws {
        let store = InMemoryCredentialStore(DeviceCredential(deviceID: UUID(), secret: "s"))
        let (client, exchanges) = DeviceAPIStub.client(store)
        let key = try await client.setSealingKey()
        #expect(try store.load()?.sealingKey == key)
        try expectSent(exchanges().last?.body, is: key)
        #expect(exchanges().last?.method == "PUT" && exchanges().last?.path == "/v1/devices/current/sealing-key")
        try await client.clearSealingKey()
        #expect(try store.load()?.sealingKey == nil && store.load()?.secret == "s")
        #expect(exchanges().last?.method == "DELETE" && exchanges().last?.path == "/v1/devices/current/sealing-key")
    }
}

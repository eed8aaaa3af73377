import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// A TLS server on 127.0.0.1 (port 0, so the kernel picks a free port) that speaks HTTP/2 and,
/// when allowed, HTTP/1.1 (chosen by ALPN). Each request goes to a synchronous handler that
/// answers or stalls. The platform fakes are built on it.
public final class FakeHTTPServer: Sendable {
    /// Decides the reply to a request; runs on the connection's event loop.
    public typealias Handler = @Sendable (FakeRequest) -> FakeReply

    /// The port the server listens on.
    public let port: Int
    /// The certificate authority clients must trust.
    public let authority: TestCertificateAuthority

    private let serverChannel: any Channel
    private let table: ConnectionTable

    /// `https://127.0.0.1:<port>`.
    public var baseURL: String { "https://127.0.0.1:\(port)" }

    /// Starts a server. `allowHTTP1` adds `http/1.1` to ALPN; `maxConcurrentStreams` is the HTTP/2 setting;
    /// `resetLimit` is how many streams a client may reset (RST_STREAM) in 30 s before the server closes its
    /// connection (swift-nio-http2's defence against rapid resets, 200 by default, as push services have one).
    public static func start(
        allowHTTP1: Bool = false, maxConcurrentStreams: Int = 1000, resetLimit: Int = 200, handler: @escaping Handler
    ) async throws -> FakeHTTPServer {
        let authority = try TestCertificateAuthority.shared.get()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(authority.certificateFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: authority.keyFile, format: .pem))
        )
        tls.applicationProtocols = allowHTTP1 ? ["h2", "http/1.1"] : ["h2"]
        let sslContext = try NIOSSLContext(configuration: tls)
        let box = ConnectionTable()
        let traffic = FakeTraffic()
        let recorded = traffic.recording(handler)
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16384),
        ]
        var stream = NIOHTTP2Handler.StreamConfiguration()
        stream.streamResetFrameRateLimit.maximumCount = resetLimit
        stream.streamResetFrameRateLimit.windowLength = .seconds(30)
        let connectionConfiguration = connection
        let streamConfiguration = stream
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let id = box.register(channel)
                channel.closeFuture.whenComplete { _ in box.unregister(id) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }.flatMap {
                    let configureHTTP2: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                        box.markHTTP2(id)
                        return channel.configureHTTP2Pipeline(
                            mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: streamConfiguration
                        ) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(
                                    FakeHTTP2StreamHandler(connectionID: id, traffic: traffic, handler: recorded))
                            }
                        }.map { _ in }
                    }
                    let configureHTTP1: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                            try channel.pipeline.syncOperations.addHandler(
                                FakeHTTP1Handler(connectionID: id, httpMajorVersion: 1, traffic: traffic, handler: recorded))
                        }
                    }
                    // Without ALPN, an HTTP/2-only server (like APNs) assumes HTTP/2 with prior knowledge.
                    return channel.eventLoop.makeCompletedFuture {
                        let alpn = ApplicationProtocolNegotiationHandler { result, channel in
                            switch result {
                            case .negotiated("h2"): return configureHTTP2(channel)
                            case .negotiated: return configureHTTP1(channel)
                            case .fallback: return allowHTTP1 ? configureHTTP1(channel) : configureHTTP2(channel)
                            }
                        }
                        try channel.pipeline.syncOperations.addHandler(alpn)
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else { throw ShellError(message: "fake server has no port") }
        return FakeHTTPServer(port: port, authority: authority, serverChannel: channel, table: box, traffic: traffic)
    }

    private init(port: Int, authority: TestCertificateAuthority, serverChannel: any Channel, table: ConnectionTable, traffic: FakeTraffic) {
        self.port = port
        self.authority = authority
        self.serverChannel = serverChannel
        self.table = table
        self.traffic = traffic
    }

    /// Every exchange (request, arrival time, answer) and the requests in flight, with their high-water mark.
    public let traffic: FakeTraffic

    /// How many connections have been accepted so far.
    public var acceptedConnections: Int { table.state.withLockedValue { $0.nextConnectionID } }

    /// Sends an HTTP/2 SETTINGS frame to every open HTTP/2 connection (e.g. lower MAX_CONCURRENT_STREAMS).
    public func sendSettings(_ settings: [HTTP2Setting]) {
        for channel in http2Channels() {
            channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))), promise: nil)
        }
    }

    /// Sends an HTTP/2 SETTINGS frame on one connection (if it is still open).
    public func sendSettings(_ settings: [HTTP2Setting], toConnection id: Int) {
        guard let channel = table.state.withLockedValue({ $0.http2Connections.contains(id) ? $0.connections[id] : nil }) else { return }
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings))), promise: nil)
    }

    /// Sends GOAWAY with JSON debug data `{"reason": reason}` to every open HTTP/2 connection, then
    /// closes them after `closeAfter`.
    public func sendGoAway(reason: String, closeAfter: TimeAmount = .milliseconds(200)) {
        for channel in http2Channels() {
            let debug = ByteBuffer(string: "{\"reason\":\"\(reason)\"}")
            channel.writeAndFlush(
                HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: debug)), promise: nil)
            channel.eventLoop.scheduleTask(in: closeAfter) { channel.close(promise: nil) }
        }
    }

    /// Closes every connection and the listening socket.
    public func shutdown() async {
        try? await serverChannel.close()
        let channels = table.state.withLockedValue { Array($0.connections.values) }
        for channel in channels {
            try? await channel.close()
        }
    }

    private func http2Channels() -> [any Channel] {
        table.state.withLockedValue { state in state.connections.filter { state.http2Connections.contains($0.key) }.map(\.value) }
    }
}

/// The open connections of one server, reachable from its channel initializers.
final class ConnectionTable: Sendable {
    struct State {
        var nextConnectionID = 0
        var connections: [Int: any Channel] = [:]
        var http2Connections: Set<Int> = []
    }

    let state = NIOLockedValueBox(State())

    func register(_ channel: any Channel) -> Int {
        state.withLockedValue { state in
            state.nextConnectionID += 1
            state.connections[state.nextConnectionID] = channel
            return state.nextConnectionID
        }
    }

    func unregister(_ id: Int) {
        _ = state.withLockedValue { $0.connections.removeValue(forKey: id) }
    }

    func markHTTP2(_ id: Int) {
        _ = state.withLockedValue { $0.http2Connections.insert(id) }
    }
}

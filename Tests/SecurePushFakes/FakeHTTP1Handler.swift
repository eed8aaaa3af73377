import Foundation
import NIOCore
import NIOHTTP1

/// Collects one HTTP/1.1 request, asks the server's handler what to
/// do, and writes the answer (or nothing, to stall).
final class FakeHTTP1Handler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let connectionID: Int
    private let httpMajorVersion: Int
    private let handler: FakeHTTPServer.Handler
    private let traffic: FakeTraffic
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    /// A request stalled on purpose: in flight until the client closes the connection.
    private var stalled = false

    init(connectionID: Int, httpMajorVersion: Int, traffic: FakeTraffic, handler: @escaping FakeHTTPServer.Handler) {
        self.connectionID = connectionID
        self.httpMajorVersion = httpMajorVersion
        self.traffic = traffic
        self.handler = handler
    }

    func channelInactive(context: ChannelHandlerContext) {
        if stalled {
            stalled = false
            traffic.finished()
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            self.head = nil
            let request = FakeRequest(
                connectionID: connectionID,
                httpMajorVersion: httpMajorVersion,
                method: head.method.rawValue,
                path: head.uri,
                headers: head.headers.map { (name: $0.name.lowercased(), value: $0.value) },
                body: Data(body.readableBytesView)
            )
            switch handler(request) {
            case .stall:
                stalled = true
            case .response(let status, let headers, let bytes):
                var responseHeaders = HTTPHeaders(headers)
                responseHeaders.replaceOrAdd(name: "content-length", value: String(bytes.count))
                let version = httpMajorVersion == 2 ? HTTPVersion(major: 2, minor: 0) : head.version
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .init(statusCode: status), headers: responseHeaders))),
                    promise: nil)
                if !bytes.isEmpty {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: bytes)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                traffic.finished()
            }
        }
    }
}

import Foundation
import NIOCore
import NIOHTTP1

/// Collects one HTTP/1.1 request, asks the server's handler what to
/// do, and writes the answer (or nothing, to stall).
final class FakeHTTP1Handler: FakeAnsweringHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let httpMajorVersion: Int
    var answerer: FakeAnswerer
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(connectionID: Int, httpMajorVersion: Int, traffic: FakeTraffic, handler: @escaping FakeHTTPServer.Handler) {
        self.httpMajorVersion = httpMajorVersion
        self.answerer = FakeAnswerer(connectionID: connectionID, traffic: traffic, handler: handler)
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
                connectionID: answerer.connectionID,
                httpMajorVersion: httpMajorVersion,
                method: head.method.rawValue,
                path: head.uri,
                headers: head.headers.map { (name: $0.name.lowercased(), value: $0.value) },
                body: Data(body.readableBytesView)
            )
            switch answerer.reply(to: request) {
            case .stall:
                break  // in flight until the client gives up (the answerer remembers the stall)
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
                answerer.answered()
            }
        }
    }
}

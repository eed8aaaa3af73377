import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Collects one HTTP/2 request from its frames (`:authority` optional, `host` accepted, as RFC 9113
/// allows), asks the server's handler what to do, and answers with HEADERS (+ DATA) or nothing.
final class FakeHTTP2StreamHandler: FakeAnsweringHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    var answerer: FakeAnswerer
    private var headers: HPACKHeaders?
    private var body = ByteBuffer()
    private var dispatched = false

    init(connectionID: Int, traffic: FakeTraffic, handler: @escaping FakeHTTPServer.Handler) {
        self.answerer = FakeAnswerer(connectionID: connectionID, traffic: traffic, handler: handler)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let payload):
            if headers == nil { headers = payload.headers }  // trailers are ignored
            if payload.endStream { dispatch(context: context) }
        case .data(let payload):
            if case .byteBuffer(var buffer) = payload.data { body.writeBuffer(&buffer) }
            if payload.endStream { dispatch(context: context) }
        default:
            break
        }
    }

    private func dispatch(context: ChannelHandlerContext) {
        guard !dispatched, let headers else { return }
        dispatched = true
        let request = FakeRequest(
            connectionID: answerer.connectionID,
            httpMajorVersion: 2,
            method: headers.first(name: ":method") ?? "",
            path: headers.first(name: ":path") ?? "",
            headers: headers.filter { !$0.name.hasPrefix(":") }.map { (name: $0.name.lowercased(), value: $0.value) },
            body: Data(body.readableBytesView)
        )
        switch answerer.reply(to: request) {
        case .stall:
            break  // in flight until the client gives up (the answerer remembers the stall)
        case .response(let status, let extra, let bytes):
            var responseHeaders = HPACKHeaders([(":status", String(status))])
            for (name, value) in extra { responseHeaders.add(name: name.lowercased(), value: value) }
            responseHeaders.add(name: "content-length", value: String(bytes.count))
            context.write(wrapOutboundOut(.headers(.init(headers: responseHeaders, endStream: bytes.isEmpty))), promise: nil)
            if !bytes.isEmpty {
                context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(bytes: bytes)), endStream: true))), promise: nil)
            }
            context.flush()
            answerer.answered()
        }
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Plain HTTP calls to a SecurePush process's API, timed.
struct APIClient: Sendable {
    /// One answer (or transport failure) and how long it took.
    struct Answer: Sendable {
        /// The status, or `nil` when no answer came (transport error or the client's own timeout).
        var status: Int?
        var body: Data
        var seconds: Double
        var failure: String?
    }

    let http: HTTPClient
    let port: Int
    /// The client's own deadline: an answer slower than this counts as a hang.
    var timeout: Duration = .seconds(30)

    /// `method path` with an optional bearer token and JSON body.
    func call(_ method: HTTPMethod, _ path: String, bearer: String? = nil, json: [String: any Sendable]? = nil) async -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        if let bearer { request.headers.add(name: "authorization", value: "Bearer \(bearer)") }
        if let json, let data = try? JSONSerialization.data(withJSONObject: json) {
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: data))
        }
        let start = ContinuousClock.now
        // A GET is retried once when a kept-alive connection turns out closed before any answer (the server
        // may close an idle connection at any time; HTTP clients retry idempotent requests then).
        for attempt in 1...2 {
            do {
                let response = try await http.execute(request, timeout: .milliseconds(timeout.wholeMilliseconds))
                let body = try await response.body.collect(upTo: 1 << 20)
                return Answer(status: Int(response.status.code), body: Data(body.readableBytesView), seconds: (ContinuousClock.now - start).seconds)
            } catch let error as HTTPClientError where attempt == 1 && method == .GET && error == .remoteConnectionClosed {
                continue
            } catch {
                return Answer(status: nil, body: Data(), seconds: (ContinuousClock.now - start).seconds, failure: "\(error)")
            }
        }
        return Answer(status: nil, body: Data(), seconds: (ContinuousClock.now - start).seconds, failure: "no answer")
    }

    /// Registers a device with a user token; returns `<device_id>.<device_secret>`.
    func register(_ body: [String: any Sendable], userToken: String) async throws -> String {
        let answer = await call(.POST, "/v1/devices", bearer: userToken, json: body)
        guard answer.status == 201, let object = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let id = object["device_id"] as? String, let secret = object["device_secret"] as? String
        else {
            throw ChaosError(
                "registering a device failed: \(answer.status.map(String.init) ?? "no answer") \(String(decoding: answer.body, as: UTF8.self))")
        }
        return id + "." + secret
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds.
    var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}

import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// An OAuth 2 access token fetched with a form POST, cached until shortly before it expires and
/// shared by all sends: concurrent callers wait for one in-flight request (single flight).
package actor OAuthTokenSource {
    /// Builds the form body for a new token (called for each fetch, so JWT assertions are fresh).
    package typealias FormBuilder = @Sendable () throws -> String

    private let url: String
    private let form: FormBuilder
    private let httpClient: HTTPClient
    private let tls: TLSConfiguration?
    private let timeout: Duration
    private let renewalMargin: TimeInterval
    private let label: String
    private var cached: (token: String, expiresAt: Date)?
    private var inFlight: Task<(token: String, expiresAt: Date), any Error>?
    /// How many tokens have been fetched (for tests and metrics).
    package private(set) var fetches = 0

    package init(
        url: String, label: String, httpClient: HTTPClient, tls: TLSConfiguration?, timeout: Duration, renewalMargin: Duration,
        form: @escaping FormBuilder
    ) {
        self.url = url
        self.label = label
        self.httpClient = httpClient
        self.tls = tls
        self.timeout = timeout
        self.renewalMargin = Double(renewalMargin.components.seconds)
        self.form = form
    }

    /// A valid access token, fetching one if needed.
    package func token() async throws -> String {
        if let cached, Date().addingTimeInterval(renewalMargin) < cached.expiresAt {
            return cached.token
        }
        if let inFlight {
            return try await inFlight.value.token
        }
        let task = Task { try await self.fetch() }
        inFlight = task
        defer { inFlight = nil }
        let fresh = try await task.value
        cached = fresh
        return fresh.token
    }

    /// Forgets `rejected` if it is still the cached token (the server said it is no longer valid).
    package func invalidate(_ rejected: String) {
        if cached?.token == rejected { cached = nil }
    }

    private func fetch() async throws -> (token: String, expiresAt: Date) {
        fetches += 1
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.tlsConfiguration = tls
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "accept", value: "application/json")
        request.body = .bytes(ByteBuffer(string: try form()))
        let response = try await httpClient.execute(request, timeout: timeout.timeAmount)
        let body = try await response.body.collect(upTo: 256 * 1024)
        guard response.status.code == 200 else {
            throw OAuthTokenError(message: "\(label) token endpoint answered \(response.status.code)", status: Int(response.status.code))
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any],
            let token = object["access_token"] as? String, !token.isEmpty
        else {
            throw OAuthTokenError(message: "\(label) token endpoint answered without access_token", status: 200)
        }
        let expiresIn = (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600
        return (token, Date().addingTimeInterval(expiresIn))
    }

    /// Form-encodes pairs (`application/x-www-form-urlencoded`).
    package static func formEncode(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return pairs.map { name, value in
            (name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name) + "="
                + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")
        }.joined(separator: "&")
    }
}

/// An access token could not be obtained. The message names the endpoint's status, never a secret.
package struct OAuthTokenError: Error, CustomStringConvertible {
    package var message: String
    package var status: Int
    package var description: String { message }
}

import Foundation
import Logging
import NIOCore
import NIOHTTP1
import SecurePushCore

/// An OAuth 2 access token fetched with a form POST, cached until shortly before it expires and
/// shared by all sends: concurrent callers wait for one in-flight request (single flight).
package actor OAuthTokenSource {
    /// Builds the form body for a new token (called for each fetch, so JWT assertions are fresh).
    package typealias FormBuilder = @Sendable () throws -> String

    private let url: String
    private let form: FormBuilder
    private let transport: ProviderTransport
    private let renewalMargin: TimeInterval
    private let label: String
    private var cached: (token: String, expiresAt: Date)?
    private var inFlight: Task<(token: String, expiresAt: Date), any Error>?
    /// How many tokens have been fetched (for tests and metrics).
    package private(set) var fetches = 0

    /// Creates a source that posts `form()` to `url` through `transport` (its TLS and deadline).
    init(url: String, label: String, transport: ProviderTransport, renewalMargin: Duration, form: @escaping FormBuilder) {
        self.url = url
        self.label = label
        self.transport = transport
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
        let response = try await transport.post(
            url, headers: ["content-type": "application/x-www-form-urlencoded", "accept": "application/json"],
            body: ByteBuffer(string: try form()), bodyLimit: 256 * 1024, logger: nil)
        guard response.status == 200 else {
            throw OAuthTokenError(message: "\(label) token endpoint answered \(response.status)", status: response.status)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any],
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

extension OAuthTokenSource {
    /// A token for one send, or the push's result when none can be had: an endpoint answer in
    /// `refused` (wrong credentials) fails permanently and is logged as `refusal` at error level,
    /// any other answer or transport error is a retry.
    func tokenForSend(refused: ClosedRange<Int>, refusal: Logger.Message, logger: Logger) async throws(TokenUnavailable) -> String {
        do {
            return try await token()
        } catch let error as OAuthTokenError where refused.contains(error.status) {
            logger.error(refusal, metadata: ["push.reason": "\(error.message)"])
            throw TokenUnavailable(result: .failed(reason: error.message))
        } catch let error as OAuthTokenError {
            // The token endpoint fails: every push of the platform would, so it counts against the provider.
            throw TokenUnavailable(result: .retry(after: nil, reason: error.message, scope: .provider))
        } catch {
            throw TokenUnavailable(result: TransportFailure.result(error, platform: "\(label) token endpoint"))
        }
    }
}

/// An access token could not be obtained. The message names the endpoint's status, never a secret.
package struct OAuthTokenError: Error, CustomStringConvertible {
    package var message: String
    package var status: Int
    package var description: String { message }
}

import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one API request under an overall deadline, with a timeout per attempt, retrying with jitter
/// on network errors, timeouts, 408, 429 and 5xx only (never on 401, 403, 404 or 410).
struct RetryingRequester: Sendable {
    let session: URLSession
    let configuration: SecurePushClient.Configuration

    /// An HTTP answer.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        /// `Retry-After` in seconds, when the server sent one.
        var retryAfter: Duration?
    }

    /// Why no usable answer came within the deadline.
    struct Unavailable: Error {
        var reason: String
    }

    func send(_ request: URLRequest) async -> Result<Answer, Unavailable> {
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.deadline
        var lastProblem = "no attempt"
        for attempt in 1...max(1, configuration.maxAttempts) {
            let remaining = deadline - clock.now
            guard remaining > .zero else { break }
            let timeout = min(configuration.requestTimeout, remaining)
            var retryAfter: Duration?
            switch await attemptOnce(request, timeout: timeout) {
            case .success(let answer) where !Self.isRetried(answer.status):
                return .success(answer)
            case .success(let answer):
                lastProblem = "HTTP \(answer.status)"
                retryAfter = answer.retryAfter
            case .failure(let problem):
                lastProblem = problem.reason
            }
            guard attempt < configuration.maxAttempts else { break }
            // Backoff with jitter (or the server's Retry-After), but never past the deadline: a pause
            // that would not fit is shortened, so the last attempt uses the time that is left.
            let base = Double(min(4000, 250 << attempt)) * Double.random(in: 0.5...1.0)
            let pause = min(max(retryAfter ?? .zero, .milliseconds(Int64(base))), (deadline - clock.now) / 2)
            guard pause > .zero else { break }
            try? await Task.sleep(for: pause)
            if Task.isCancelled { return .failure(Unavailable(reason: "cancelled")) }
        }
        return .failure(Unavailable(reason: lastProblem))
    }

    static func isRetried(_ status: Int) -> Bool {
        status == 408 || status == 429 || (500...599).contains(status)
    }

    /// One attempt, abandoned at `timeout` whatever the transport does.
    private func attemptOnce(_ request: URLRequest, timeout: Duration) async -> Result<Answer, Unavailable> {
        var timed = request
        timed.timeoutInterval = max(0.1, Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        let request = timed
        let session = self.session
        return await withTaskGroup(of: Result<Answer, Unavailable>?.self) { group in
            group.addTask {
                do {
                    let (data, response) = try await session.data(for: request)
                    guard let http = response as? HTTPURLResponse else { return .failure(Unavailable(reason: "not an HTTP response")) }
                    let retryAfter = (http.value(forHTTPHeaderField: "Retry-After")).flatMap(Int.init).map { Duration.seconds(min(max($0, 0), 3600)) }
                    return .success(Answer(status: http.statusCode, body: data, retryAfter: retryAfter))
                } catch {
                    return .failure(Unavailable(reason: "network error (\((error as? URLError)?.code.rawValue ?? -1))"))
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(Unavailable(reason: "timed out after \(timeout)"))
            }
            var result: Result<Answer, Unavailable> = .failure(Unavailable(reason: "timed out after \(timeout)"))
            if let first = await group.next(), let first { result = first }
            group.cancelAll()
            return result
        }
    }
}

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

    /// One attempt, abandoned at `timeout` whatever the transport does: the request runs in a task of
    /// its own, so a transport that does not answer cancellation (URLSession on Linux with a server that
    /// stalls) cannot hold the attempt past its timeout; it is cancelled and left to end on its own.
    private func attemptOnce(_ request: URLRequest, timeout: Duration) async -> Result<Answer, Unavailable> {
        var timed = request
        timed.timeoutInterval = max(0.1, Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        let request = timed
        let session = self.session
        let race = AttemptRace()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Answer, Unavailable>, Never>) in
                race.start(continuation)
                race.run(
                    work: Task { race.finish(await Self.perform(request, on: session)) },
                    timer: Task {
                        try? await Task.sleep(for: timeout)
                        race.finish(.failure(Unavailable(reason: "timed out after \(timeout)")))
                    })
            }
        } onCancel: {
            race.finish(.failure(Unavailable(reason: "cancelled")))
        }
    }

    private static func perform(_ request: URLRequest, on session: URLSession) async -> Result<Answer, Unavailable> {
        do {
            let (data, response) = try await SessionDataTask.data(for: request, on: session)
            guard let http = response as? HTTPURLResponse else { return .failure(Unavailable(reason: "not an HTTP response")) }
            let retryAfter = (http.value(forHTTPHeaderField: "Retry-After")).flatMap(Int.init).map { Duration.seconds(min(max($0, 0), 3600)) }
            return .success(Answer(status: http.statusCode, body: data, retryAfter: retryAfter))
        } catch {
            return .failure(Unavailable(reason: "network error (\((error as? URLError)?.code.rawValue ?? -1))"))
        }
    }
}

/// The first of an attempt's answer, its timeout and its cancellation resumes the attempt, once; the
/// others are cancelled.
private final class AttemptRace: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Result<RetryingRequester.Answer, RetryingRequester.Unavailable>, Never>?
    private var outcome: Result<RetryingRequester.Answer, RetryingRequester.Unavailable>?
    private var tasks: [Task<Void, Never>] = []

    func start(_ continuation: CheckedContinuation<Result<RetryingRequester.Answer, RetryingRequester.Unavailable>, Never>) {
        lock.lock()
        if let outcome {
            lock.unlock()
            continuation.resume(returning: outcome)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    func run(work: Task<Void, Never>, timer: Task<Void, Never>) {
        lock.lock()
        let finished = outcome != nil
        if !finished { tasks = [work, timer] }
        lock.unlock()
        if finished {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<RetryingRequester.Answer, RetryingRequester.Unavailable>) {
        lock.lock()
        guard outcome == nil else {
            lock.unlock()
            return
        }
        outcome = result
        let continuation = self.continuation
        let tasks = self.tasks
        (self.continuation, self.tasks) = (nil, [])
        lock.unlock()
        tasks.forEach { $0.cancel() }
        continuation?.resume(returning: result)
    }
}

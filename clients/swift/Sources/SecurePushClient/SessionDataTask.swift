import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `URLSession.data(for:)` on the completion-handler API, cancelled with `URLSessionTask.cancel()`.
///
/// swift-corelibs-foundation's own async `data(for:)` holds a lock of its cancellation state while it
/// cancels the task, and cancelling waits for the session's queue; if the request fails at that moment,
/// the session's queue waits for the same lock to report it, and both threads (and every task waiting on
/// them) hang for good. Here the cancellation takes no lock while it cancels, and the completion handler
/// takes none of the canceller's.
final class SessionDataTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    /// The body and response of `request`, or the transport's error; cancelling the calling task cancels the request.
    static func data(for request: URLRequest, on session: URLSession) async throws -> (Data, URLResponse) {
        let holder = SessionDataTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                holder.start(task)
            }
        } onCancel: {
            holder.cancel()
        }
    }

    private func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelNow = cancelled
        lock.unlock()
        task.resume()
        if cancelNow { task.cancel() }
    }

    private func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

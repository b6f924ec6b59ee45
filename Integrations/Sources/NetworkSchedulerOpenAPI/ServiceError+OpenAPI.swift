import NetworkScheduler
import OpenAPIRuntime

extension ServiceError {
    /// The scheduler's error in what a generated client threw, wherever the runtime put it.
    ///
    /// An error while an operation is sent (a refused connection, a deadline, a cancellation
    /// while it waited in its line or was on the wire) reaches the app inside OpenAPIRuntime's
    /// `ClientError`, as its `underlyingError`; an error while a streamed body is read (the
    /// call cancelled mid-body, the connection lost) is thrown by the body's sequence as it is.
    /// This reads both, and a task's `CancellationError`, the same way. Nil when the error is
    /// not the scheduler's: the generated client's own, such as a body it could not decode.
    ///
    /// ```swift
    /// do {
    ///     let feed = try await withScheduling(group: screen) { try await client.getFeed() }.ok.body.json
    ///     show(feed)
    /// } catch {
    ///     switch ServiceError(unwrapping: error) {
    ///     case .cancelled?: break // the screen went away
    ///     case let failure?: showAlert(failure.localizedDescription)
    ///     case nil: showAlert("The answer could not be read.")
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter error: what a generated client's operation, or the body it returned, threw.
    public init?(unwrapping error: any Error) {
        var error = error
        // A `ClientError` holds the transport's error; one inside another is unwrapped too,
        // a few levels deep at most.
        for _ in 0..<4 {
            switch error {
            case let failure as ServiceError:
                self = failure
                return
            case is CancellationError:
                self = .cancelled
                return
            case let wrapped as ClientError:
                error = wrapped.underlyingError
            default:
                return nil
            }
        }
        return nil
    }
}

import Foundation

extension APIClient {
    /// A request of this client as an `Operation` of the app's: it sends `resource` when it
    /// starts and finishes once `completion` has run, whatever the outcome, so that the app's
    /// own operations can depend on it.
    ///
    /// ```swift
    /// let fetch = api.operation(for: .feed(page: 1), priority: .high) { result in store(result) }
    /// let importer = BlockOperation { importIntoDatabase() }
    /// importer.addDependency(fetch)
    /// appQueue.addOperations([fetch, importer], waitUntilFinished: false)
    /// ```
    ///
    /// Add it to one of the app's queues, or call its `start()`: once started, the request is
    /// scheduled like any other (its host's budget and line, deduplication, its group), and the
    /// operation stays executing until its outcome is delivered, so it holds a place in that
    /// queue's `maxConcurrentOperationCount` meanwhile. It is one caller:
    /// - `cancel()` ends that caller with ``ServiceError/cancelled`` (before it started, without
    ///   touching the network); a call it shares with other callers goes on for them. An
    ///   operation released without ever starting ends its caller the same way.
    /// - `queuePriority` is the request's priority, one level each (`.veryLow` is
    ///   ``RequestPriority/background``, `.veryHigh` ``RequestPriority/critical``): setting it
    ///   re-ranks the request while it waits or runs.
    /// - As another request's dependency (`after: [fetch]`), it passes on its caller's failure.
    ///
    /// - Parameters:
    ///   - resource: as for ``send(_:priority:group:after:progress:completion:)``.
    ///   - priority: its place in its host's line, and the operation's `queuePriority`.
    ///   - group: the scope whose cancellation cancels this caller, from the operation's making
    ///     (one not started then ends, unsent, when it starts).
    ///   - dependencies: requests and operations that must succeed first, waited for once the
    ///     operation has started (it may also depend on operations of its own queue the usual
    ///     way, with `addDependency`).
    ///   - completion: gets the model or the error, on the scheduler's callback queue.
    /// - Returns: the operation, not started.
    public func operation<Model>(
        for resource: Resource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        completion: @escaping @Sendable (Result<Model, ServiceError>) -> Void
    ) -> Operation {
        let handle = scheduler.makeHandle(resolve(resource), priority: priority, group: group,
                                          callbacks: scheduler.callbacks, completion: .model(completion))
        return RequestOperation(handle: handle, after: dependencies)
    }
}

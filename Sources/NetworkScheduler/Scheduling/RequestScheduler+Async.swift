extension RequestScheduler {
    /// Sends a request and returns its model. Cancelling the calling task cancels this caller
    /// only; a call it shares with others goes on for them.
    ///
    /// ```swift
    /// let friends = try await scheduler.value(for: api.endpoint(.friends(of: me)), priority: .high)
    /// ```
    ///
    /// - Parameters:
    ///   - request: the endpoint to send: a client's resource (``APIClient/endpoint(_:)``) or your own
    ///     `URLRequest`.
    ///   - priority: its place in its host's line; a call shared by several callers runs at the highest
    ///     priority among them.
    ///   - group: the screen (or other scope) whose cancellation cancels this caller; none by default.
    ///   - dependencies: requests that must succeed first (handles or tasks); if one fails or is
    ///     cancelled, this one ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is
    ///     never sent.
    public func value<Model>(
        for request: Endpoint<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = []
    ) async throws(ServiceError) -> Model {
        try await reply(for: request, priority: priority, group: group, after: dependencies).value
    }

    /// Sends a request and returns its model with the response's status, headers and timing.
    ///
    /// - Parameters:
    ///   - request: the endpoint to send: a client's resource (``APIClient/endpoint(_:)``) or your own
    ///     `URLRequest`.
    ///   - priority: its place in its host's line; a call shared by several callers runs at the highest
    ///     priority among them.
    ///   - group: the screen (or other scope) whose cancellation cancels this caller; none by default.
    ///   - dependencies: requests that must succeed first (handles or tasks); if one fails or is
    ///     cancelled, this one ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is
    ///     never sent.
    public func reply<Model>(
        for request: Endpoint<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = []
    ) async throws(ServiceError) -> Reply<Model> {
        let slot = CancellationSlot()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // A task cancelled before it asked sends nothing: cancelling a handle once it is
                // enqueued would race with its operation starting on a queue's thread.
                guard !slot.isCancelled else {
                    continuation.resume(returning: Result<Reply<Model>, ServiceError>.failure(.cancelled))
                    return
                }
                // Delivered inline: the continuation itself hops to the awaiting task.
                let handle = enqueue(request, priority: priority, group: group, after: dependencies,
                                     callbacks: nil, completion: .reply { continuation.resume(returning: $0) })
                slot.attach(handle)
            }
        } onCancel: {
            // Runs first, and at once, when the task is already cancelled.
            slot.cancel()
        }
        return try result.get()
    }

    /// Sends a request and returns at once with a task whose model you await later, and that
    /// other requests can wait for (`after: [login]`). It runs whether or not anyone awaits it;
    /// ``RequestTask/cancel()`` or its group cancels it.
    ///
    /// ```swift
    /// let login = scheduler.task(for: auth.endpoint(.login(credentials)), priority: .critical)
    /// let me = try await scheduler.value(for: api.endpoint(.me), after: [login])
    /// ```
    ///
    /// - Parameters:
    ///   - request: the endpoint to send: a client's resource (``APIClient/endpoint(_:)``) or your own
    ///     `URLRequest`.
    ///   - priority: its place in its host's line; a call shared by several callers runs at the highest
    ///     priority among them.
    ///   - group: the screen (or other scope) whose cancellation cancels this caller; none by default.
    ///   - dependencies: requests that must succeed first (handles or tasks); if one fails or is
    ///     cancelled, this one ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is
    ///     never sent.
    public func task<Model>(
        for request: Endpoint<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = []
    ) -> RequestTask<Model> {
        let result = Promise<Result<Reply<Model>, ServiceError>>()
        // Delivered inline: the promise resumes its awaiting tasks, which hop on their own.
        let handle = enqueue(request, priority: priority, group: group, after: dependencies,
                             callbacks: nil, completion: .reply { result.fulfill($0) })
        return RequestTask(handle: handle, result: result)
    }
}

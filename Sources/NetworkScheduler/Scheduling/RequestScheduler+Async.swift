extension RequestScheduler {
    /// Sends an endpoint and returns its model with the response's status, headers and timing.
    /// Cancelling the calling task cancels this caller only. Apps send through
    /// ``APIClient/reply(for:priority:group:after:progress:)``, which documents the parameters.
    func reply<Model>(
        for request: Endpoint<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil
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
                                     callbacks: nil, progress: progress, completion: .reply { continuation.resume(returning: $0) })
                slot.attach(handle)
            }
        } onCancel: {
            // Runs first, and at once, when the task is already cancelled.
            slot.cancel()
        }
        return try result.get()
    }
}

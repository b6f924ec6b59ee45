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
        let (callResult, handle) = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<(CallResult, RequestHandle?), Never>) in
                // A task cancelled before it asked sends nothing: cancelling a handle once it is
                // enqueued would race with its operation starting on a queue's thread.
                guard !slot.isCancelled else {
                    continuation.resume(returning: (.failure(.cancelled), nil))
                    return
                }
                // Handed over unread on the thread that ends the caller: the continuation
                // itself hops to the awaiting task, which decodes.
                let handle = enqueue(request, priority: priority, group: group, after: dependencies,
                                     callbacks: nil, progress: progress,
                                     completion: .handOver { continuation.resume(returning: ($0, $1)) })
                slot.attach(handle)
            }
        } onCancel: {
            // Runs first, and at once, when the task is already cancelled.
            slot.cancel()
        }
        // Read here, on the awaiting task; the caller ends once it is read.
        let (reply, outcome) = Completion.reply(of: callResult, readingWith: request)
        handle?.finish(outcome, metrics: callResult.metrics)
        return try reply.get()
    }
}

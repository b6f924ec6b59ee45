/// A response read as it arrives: its elements in order, then its end (the sequence ends) or
/// its error (a ``ServiceError``). Made by ``APIClient/stream(_:priority:group:after:)``.
///
/// It is one caller like any other: it waits its turn by priority in its host's line for
/// streams, after its dependencies; its group, its handle, ``cancel()``, the cancellation of the
/// task that reads it, or its release end it with ``ServiceError/cancelled``, and stop its
/// transport. One task reads it at a time.
///
/// ```swift
/// let feed = api.stream(.events("feed/live"), priority: .high, group: screen)
/// for try await event in feed { show(event) }
/// ```
public final class ResponseStream<Element: Sendable>: AsyncSequence, Sendable {
    /// The error it ends with.
    public typealias Failure = ServiceError

    /// Its caller: change its priority, pass it to `after:`, or cancel it.
    public let handle: RequestHandle
    let channel: StreamChannel<Element>

    init(handle: RequestHandle, channel: StreamChannel<Element>) {
        self.handle = handle
        self.channel = channel
    }

    deinit {
        // Nobody can read it any more: its call must not keep its slot.
        if !channel.isFinished { cancel() }
    }

    /// Ends the stream with ``ServiceError/cancelled`` now, and its call with it.
    public func cancel() {
        channel.finish(.failure(.cancelled))
        handle.cancel()
    }

    /// The head of the answer it reads (status and fields), once it arrived; for a stream
    /// that reconnects, the first connection's. It throws the error the stream ended with if
    /// it ended before an answer's body was taken (an answer other than 2xx ends it with
    /// ``ServiceError/server(_:)``). Cancelling the waiting task cancels the stream.
    ///
    /// ```swift
    /// let export = api.stream(.chunks("exports/latest"))
    /// let length = try await export.head().value(forHTTPHeaderField: "Content-Length")
    /// ```
    public func head() async throws(ServiceError) -> ResponseHead {
        let head = await withTaskCancellationHandler {
            await channel.responseHead()
        } onCancel: {
            cancel()
        }
        return try head.get()
    }

    /// Reads the stream's elements, in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: ResponseStream

        /// The next element; nil once the stream ended. Cancelling the reading task cancels the
        /// stream.
        public mutating func next() async throws(ServiceError) -> Element? {
            let stream = stream
            let next = await withTaskCancellationHandler {
                await stream.channel.nextResult()
            } onCancel: {
                stream.cancel()
            }
            return try next.get()
        }
    }

    /// Its iterator; one task reads at a time.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }
}

/// How much of a transfer has gone: of an upload's body out, of a download's body in.
///
/// A caller gets it through `progress:` (``APIClient/send(_:priority:group:after:progress:completion:)``)
/// or ``RequestHandle/progress``. A call shared by several callers reports its progress to each.
/// A retried upload starts again from zero; a resumed download starts from what it had.
///
/// ```swift
/// api.send(.avatar(form), priority: .low, progress: { progress in
///     bar.value = progress.fractionSent ?? 0
/// }) { result in … }
/// ```
public struct TransferProgress: Sendable, Equatable {
    /// The bytes of the request's body sent so far in this attempt.
    public var bytesSent: Int64
    /// The bytes of the whole request body, or nil when the transport does not know.
    public var bytesExpectedToSend: Int64?
    /// The bytes of a download's body it has so far (a resumed one counts what it resumed from).
    public var bytesReceived: Int64
    /// The bytes of a download's whole body, or nil when the server did not say.
    public var bytesExpectedToReceive: Int64?

    /// A progress of a body going out.
    ///
    /// - Parameters:
    ///   - bytesSent: the bytes sent so far.
    ///   - bytesExpectedToSend: the bytes of the whole body, or nil if unknown.
    @inlinable public init(bytesSent: Int64, bytesExpectedToSend: Int64?) {
        self.init(bytesSent: bytesSent, bytesExpectedToSend: bytesExpectedToSend, bytesReceived: 0, bytesExpectedToReceive: nil)
    }

    /// A progress of a body going out and one coming in.
    ///
    /// - Parameters:
    ///   - bytesSent: the bytes sent so far.
    ///   - bytesExpectedToSend: the bytes of the whole body to send, or nil if unknown.
    ///   - bytesReceived: the bytes received so far.
    ///   - bytesExpectedToReceive: the bytes of the whole body to receive, or nil if unknown.
    @inlinable public init(bytesSent: Int64, bytesExpectedToSend: Int64?, bytesReceived: Int64, bytesExpectedToReceive: Int64?) {
        self.bytesSent = bytesSent
        self.bytesExpectedToSend = bytesExpectedToSend.flatMap { $0 >= 0 ? $0 : nil }
        self.bytesReceived = bytesReceived
        self.bytesExpectedToReceive = bytesExpectedToReceive.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// A progress of a download's body coming in.
    ///
    /// - Parameters:
    ///   - bytesReceived: the bytes received so far.
    ///   - bytesExpectedToReceive: the bytes of the whole body, or nil if unknown.
    @inlinable public static func received(_ bytesReceived: Int64, of bytesExpectedToReceive: Int64?) -> TransferProgress {
        TransferProgress(bytesSent: 0, bytesExpectedToSend: nil, bytesReceived: bytesReceived,
                         bytesExpectedToReceive: bytesExpectedToReceive)
    }

    /// The part of the body sent, from 0 to 1; nil when its size is not known.
    @inlinable public var fractionSent: Double? { Self.fraction(bytesSent, of: bytesExpectedToSend) }

    /// The part of a download's body received, from 0 to 1; nil when its size is not known.
    @inlinable public var fractionReceived: Double? { Self.fraction(bytesReceived, of: bytesExpectedToReceive) }

    /// Whether the whole body has gone out.
    @inlinable public var isSent: Bool {
        bytesExpectedToSend.map { bytesSent >= $0 } ?? false
    }

    /// Whether everything it expects, out and in, has gone.
    @inlinable package var isComplete: Bool {
        let whole = (bytesExpectedToSend ?? 0) + (bytesExpectedToReceive ?? 0)
        return (bytesExpectedToSend != nil || bytesExpectedToReceive != nil) && bytesSent + bytesReceived >= whole
    }

    @inlinable static func fraction(_ done: Int64, of expected: Int64?) -> Double? {
        guard let expected else { return nil }
        guard expected > 0 else { return 1 }
        return min(1, Double(max(0, done)) / Double(expected))
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every way a request can fail, as one typed error.
///
/// ```swift
/// do {
///     let friends = try await api.value(for: .friends(of: user))
/// } catch .noConnection {
///     showOfflineBanner()
/// } catch .server(let response) where response.statusCode == 404 {
///     showNotFound()
/// } catch {
///     showAlert(error.localizedDescription)
/// }
/// ```
public enum ServiceError: Error, Sendable, Equatable {
    /// The device is offline, or the host's name could not be resolved.
    case noConnection(URLError)
    /// The host was found but did not accept a connection (refused, or unreachable from here).
    case cannotConnect(URLError)
    /// The connection was lost while the request was sent or its answer read.
    case connectionLost(URLError)
    /// A secure connection could not be made (TLS handshake, certificate).
    case secureConnectionFailed(URLError)
    /// The server's reply was not HTTP that could be read.
    case badServerResponse(URLError)
    /// The response was larger than the limit set for it (`limit` bytes), so reading stopped.
    case responseTooLarge(limit: Int)
    /// A stream's reader fell behind by more than twice its buffer (`limit` bytes) over a
    /// transport that cannot stop reading the connection (URLSession on Linux): see <doc:Streams>.
    case streamBufferFull(limit: Int)
    /// A download's file could not be written: its folder refuses it, or the disk is full.
    /// `reason` names the file and says why, as the system did.
    case cannotWriteFile(reason: String)
    /// The request asked for the cache's answer only (``CachePolicy/onlyCache``, or
    /// `Cache-Control: only-if-cached`), and the cache has none for it.
    case notCached
    /// The request did not end within its deadline: its timeout, counted from when it was put
    /// on the wire to its last byte, whatever the server or the transport did meanwhile; for an
    /// upload, counted again from each step of its progress (see <doc:Uploads>).
    case timedOut
    /// The caller cancelled the request, directly, through its group or its Swift task.
    case cancelled
    /// The request's own deadline (``Resource/within(_:)``) passed before it ended, wherever it
    /// was: waiting for its dependencies, its lane or a budget slot, on the wire, or backing off.
    case deadlineExceeded
    /// The request was shed without being sent: its host's waiting line was full
    /// (``RequestScheduler/Configuration-swift.struct/maximumWaitingPerHost``), and it was the
    /// newest of the least urgent requests waiting there.
    case lineFull(host: String)
    /// The transport was shut down (``URLSessionTransport/invalidate()``, or its
    /// ``TransportLifecycle`` closed) before this request reached it. Callers in flight or
    /// waiting when it closed end ``cancelled``; this is for a request sent after.
    case transportClosed
    /// The server answered with a status the resource does not accept.
    case server(ServiceError.ServerResponse)
    /// 409 to a request with an `Idempotency-Key`: the first request with that key is still
    /// being processed. Retried by default; reported when retries are exhausted.
    case idempotencyKeyInUse(ServiceError.ServerResponse)
    /// 422 to a request with an `Idempotency-Key`: the key was already used with another payload.
    case idempotencyKeyMismatch(ServiceError.ServerResponse)
    /// The server rejected the token (401) and getting a new one failed.
    indirect case authenticationFailed(cause: ServiceError)
    /// The response arrived but could not be turned into the model.
    case undecodable(ServiceError.DecodingFailure)
    /// The request could not be built: a bad URL or a body that cannot be encoded.
    case invalidRequest(reason: String)
    /// A request given in `after:` (`dependency`) failed or was cancelled, so this one never
    /// ran. `cause` is where the failure began: the dependency's own error, or, down a chain
    /// of dependents, the error of the first request that failed. It is never itself a
    /// `dependencyFailed`, so a chain of any length makes an error one level deep.
    indirect case dependencyFailed(cause: ServiceError, dependency: RequestHandle.ID)
    /// Any other transport failure (a redirect loop, a redirect the policy refused…).
    case transport(URLError)
    /// An error thrown by the app's own code (a token refresh), as it was thrown.
    case underlying(ServiceError.UnderlyingError)
}

extension ServiceError {
    /// An error thrown by the app's own code, kept inside a ``ServiceError``.
    ///
    /// Two are equal when they are of the same type and read the same.
    public struct UnderlyingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The error as it was thrown.
        public let error: any Error

        /// Wraps `error`.
        ///
        /// - Parameter error: the error to wrap.
        public init(_ error: any Error) {
            self.error = error
        }

        /// The wrapped error's own description.
        public var description: String { String(describing: error) }

        public static func == (lhs: ServiceError.UnderlyingError, rhs: ServiceError.UnderlyingError) -> Bool {
            type(of: lhs.error) == type(of: rhs.error) && lhs.description == rhs.description
        }
    }
}

extension ServiceError {
    /// The HTTP status of a server error, if this is one.
    public var statusCode: Int? {
        serverResponse?.statusCode
    }

    /// What the server said, for the errors that carry a response.
    public var serverResponse: ServiceError.ServerResponse? {
        switch self {
        case .server(let response), .idempotencyKeyInUse(let response), .idempotencyKeyMismatch(let response):
            return response
        default:
            return nil
        }
    }

    /// Whether the network, the host or the connection failed, rather than the request or the
    /// server's answer: worth another try, and while offline a reason to wait.
    public var isConnectivityFailure: Bool {
        switch self {
        case .noConnection, .cannotConnect, .connectionLost: true
        default: false
        }
    }

    /// The `URLError` behind a transport or connectivity failure, if there is one.
    public var urlError: URLError? {
        switch self {
        case .noConnection(let error), .cannotConnect(let error), .connectionLost(let error),
             .secureConnectionFailed(let error), .badServerResponse(let error), .transport(let error):
            return error
        case .timedOut: return URLError(.timedOut)
        case .cancelled: return URLError(.cancelled)
        default: return nil
        }
    }

    /// The case's name (`timedOut`, `server`, `dependencyFailed`…): a short, stable label that
    /// holds no secret, for log fields and metric dimensions.
    public var caseName: String {
        switch self {
        case .noConnection: "noConnection"
        case .cannotConnect: "cannotConnect"
        case .connectionLost: "connectionLost"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .badServerResponse: "badServerResponse"
        case .responseTooLarge: "responseTooLarge"
        case .streamBufferFull: "streamBufferFull"
        case .cannotWriteFile: "cannotWriteFile"
        case .notCached: "notCached"
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case .deadlineExceeded: "deadlineExceeded"
        case .lineFull: "lineFull"
        case .transportClosed: "transportClosed"
        case .server: "server"
        case .idempotencyKeyInUse: "idempotencyKeyInUse"
        case .idempotencyKeyMismatch: "idempotencyKeyMismatch"
        case .authenticationFailed: "authenticationFailed"
        case .undecodable: "undecodable"
        case .invalidRequest: "invalidRequest"
        case .dependencyFailed: "dependencyFailed"
        case .transport: "transport"
        case .underlying: "underlying"
        }
    }

    /// The failure that stopped this request: for a failed dependency, where the failure
    /// began; for any other error, the error itself.
    public var rootCause: ServiceError {
        if case .dependencyFailed(let cause, _) = self { return cause }
        return self
    }
}

extension ServiceError: LocalizedError {
    /// What went wrong, in words a person can read.
    public var errorDescription: String? {
        switch self {
        case .noConnection:
            return "No internet connection: the server could not be reached."
        case .cannotConnect:
            return "The server could not be reached: it refused the connection or is down."
        case .connectionLost:
            return "The connection to the server was lost before its answer arrived."
        case .secureConnectionFailed:
            return "A secure connection to the server could not be made."
        case .badServerResponse:
            return "The server's answer could not be read."
        case .responseTooLarge(let limit):
            return "The server's answer was larger than the \(limit) bytes allowed."
        case .streamBufferFull(let limit):
            return "The stream arrived faster than it was read: more than twice its \(limit)-byte buffer was waiting."
        case .cannotWriteFile(let reason):
            return "The download could not be saved: \(reason)"
        case .notCached:
            return "The answer was asked of the cache only, and the cache has none."
        case .timedOut:
            return "The server took too long to answer."
        case .cancelled:
            return "The request was cancelled."
        case .deadlineExceeded:
            return "The request did not end within its deadline."
        case .lineFull(let host):
            return "Too many requests were waiting for \(host), so this one was not sent."
        case .transportClosed:
            return "The connection to the server was shut down, so this request was not sent."
        case .server(let response):
            if let message = response.message {
                return "The server answered \(response.statusCode): \(message)"
            }
            return "The server answered \(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))."
        case .idempotencyKeyInUse(let response):
            return "The server answered \(response.statusCode)\(response.message.map { ": \($0)" } ?? ""), "
                + "which for a request with an idempotency key means the same request is still being processed."
        case .idempotencyKeyMismatch(let response):
            return "The server answered \(response.statusCode)\(response.message.map { ": \($0)" } ?? ""), "
                + "which for a request with an idempotency key means it already received a different request with that key."
        case .authenticationFailed(let cause):
            return "You were signed out and signing in again failed: \(cause.errorDescription ?? "\(cause)")"
        case .undecodable(let failure):
            return "The server's response could not be read: \(failure)"
        case .invalidRequest(let reason):
            return "The request could not be made: \(reason)"
        case .dependencyFailed(let cause, _):
            return "A request this one depends on failed: \(cause.errorDescription ?? "\(cause)")"
        case .transport(let error):
            return "Something went wrong talking to the server (\(error.code.rawValue))."
        case .underlying(let error):
            return (error.error as? any LocalizedError)?.errorDescription ?? "\(error)"
        }
    }
}

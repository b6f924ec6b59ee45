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
    /// The device is offline, or the host could not be found or reached.
    case noConnection(URLError)
    /// The server did not answer within the request's timeout.
    case timedOut
    /// The caller cancelled the request, directly, through its group or its Swift task.
    case cancelled
    /// The server answered with a status the resource does not accept.
    case server(ServerErrorResponse)
    /// 409 to a request with an `Idempotency-Key`: the first request with that key is still
    /// being processed. Retried by default; reported when retries are exhausted.
    case idempotencyKeyInUse(ServerErrorResponse)
    /// 422 to a request with an `Idempotency-Key`: the key was already used with another payload.
    case idempotencyKeyMismatch(ServerErrorResponse)
    /// The server rejected the token (401) and getting a new one failed.
    indirect case authenticationFailed(cause: ServiceError)
    /// The response arrived but could not be turned into the model.
    case undecodable(DecodingFailure)
    /// The request could not be built: a bad URL or a body that cannot be encoded.
    case invalidRequest(reason: String)
    /// A request given in `after:` (`dependency`) failed or was cancelled, so this one never
    /// ran. `cause` is where the failure began: the dependency's own error, or, down a chain
    /// of dependents, the error of the first request that failed. It is never itself a
    /// `dependencyFailed`, so a chain of any length makes an error one level deep.
    indirect case dependencyFailed(cause: ServiceError, dependency: RequestID)
    /// Any other transport failure (a malformed response, TLS, a redirect loop…).
    case transport(URLError)
}

extension ServiceError {
    /// Whether this is a cancellation of the caller itself.
    public var isCancellation: Bool { self == .cancelled }

    /// The HTTP status of a server error, if this is one.
    public var statusCode: Int? {
        serverResponse?.statusCode
    }

    /// What the server said, for the errors that carry a response.
    public var serverResponse: ServerErrorResponse? {
        switch self {
        case .server(let response), .idempotencyKeyInUse(let response), .idempotencyKeyMismatch(let response):
            return response
        default:
            return nil
        }
    }

    /// The `URLError` behind a transport or connectivity failure, if there is one.
    public var urlError: URLError? {
        switch self {
        case .noConnection(let error), .transport(let error): return error
        case .timedOut: return URLError(.timedOut)
        case .cancelled: return URLError(.cancelled)
        default: return nil
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
        case .timedOut:
            return "The server took too long to answer."
        case .cancelled:
            return "The request was cancelled."
        case .server(let response):
            if let message = response.message {
                return "The server answered \(response.statusCode): \(message)"
            }
            return "The server answered \(response.statusCode) (\(HTTPURLResponse.localizedString(forStatusCode: response.statusCode)))."
        case .idempotencyKeyInUse:
            return "The same request is still being processed by the server."
        case .idempotencyKeyMismatch:
            return "The server already received a different request with the same idempotency key."
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
        }
    }
}

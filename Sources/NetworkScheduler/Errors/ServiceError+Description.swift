import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Errors end up in logs and crash reports, so what they print carries no secret: no response
// header value (a `Set-Cookie`), no body, no token. `unredactedDescription` is the explicit
// way to see everything, for a debugging session.

extension ServiceError: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The case and what is safe to log of it: statuses, the server's message, error codes.
    public var description: String { rendered(revealing: false) }

    /// The same as ``description``: `String(reflecting:)` and `dump` reveal no more.
    public var debugDescription: String { description }

    /// No children: `dump` and the debugger show ``description`` and nothing under it (a
    /// `URLError`'s user info holds the failing URL, query included).
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// Everything the error holds, response headers and bodies included: for a debugging
    /// session, never for a log that others read.
    public var unredactedDescription: String { rendered(revealing: true) }

    private func rendered(revealing: Bool) -> String {
        func response(_ response: ServiceError.ServerResponse) -> String {
            revealing ? response.unredactedDescription : response.description
        }
        switch self {
        case .noConnection(let error): return "noConnection(\(Self.code(error)))"
        case .cannotConnect(let error): return "cannotConnect(\(Self.code(error)))"
        case .connectionLost(let error): return "connectionLost(\(Self.code(error)))"
        case .secureConnectionFailed(let error): return "secureConnectionFailed(\(Self.code(error)))"
        case .badServerResponse(let error): return "badServerResponse(\(Self.code(error)))"
        case .responseTooLarge(let limit): return "responseTooLarge(limit: \(limit))"
        case .streamBufferFull(let limit): return "streamBufferFull(limit: \(limit))"
        case .cannotWriteFile(let reason): return "cannotWriteFile(\(reason))"
        case .notCached: return "notCached"
        case .timedOut: return "timedOut"
        case .cancelled: return "cancelled"
        case .deadlineExceeded: return "deadlineExceeded"
        case .lineFull(let host): return "lineFull(host: \(host))"
        case .transportClosed: return "transportClosed"
        case .server(let value): return "server(\(response(value)))"
        case .idempotencyKeyInUse(let value): return "idempotencyKeyInUse(\(response(value)))"
        case .idempotencyKeyMismatch(let value): return "idempotencyKeyMismatch(\(response(value)))"
        case .authenticationFailed(let cause): return "authenticationFailed(cause: \(cause.rendered(revealing: revealing)))"
        case .undecodable(let failure): return "undecodable(\(failure))"
        case .invalidRequest(let reason): return "invalidRequest(\(reason))"
        case .dependencyFailed(let cause, let dependency):
            return "dependencyFailed(cause: \(cause.rendered(revealing: revealing)), dependency: \(dependency))"
        case .transport(let error): return "transport(\(Self.code(error)))"
        case .underlying(let error): return "underlying(\(error))"
        }
    }

    /// A URL error by its code alone: its user info holds the failing URL, query included.
    private static func code(_ error: URLError) -> String {
        "URLError \(error.code.rawValue)"
    }
}

extension ServiceError.ServerResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status, the server's message, the body's size and the headers' names, not their values.
    public var description: String {
        var text = "\(statusCode)"
        if let message { text += " \"\(message)\"" }
        text += ", \(body.count)-byte body"
        if !headers.isEmpty { text += ", headers: \(headers.names.sorted().joined(separator: ", "))" }
        return text
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The same as ``description``, for `dump` and the debugger.
    public var customMirror: Mirror {
        Mirror(self, children: ["statusCode": statusCode, "message": message as Any, "bodySize": body.count,
                                "headerNames": headers.names.sorted()])
    }

    /// Everything, header values and body included: for a debugging session only.
    public var unredactedDescription: String {
        let headerText = headers.map { "\($0.name): \($0.value)" }.joined(separator: "; ")
        return "\(statusCode), headers: [\(headerText)], body: \(String(decoding: body, as: UTF8.self))"
    }
}

extension ServiceError.DecodingFailure: CustomDebugStringConvertible, CustomReflectable {
    /// The same as ``description``: the body's start stays out of logs.
    public var debugDescription: String { description }

    /// The model type, the coding path and the reason, not the body.
    public var customMirror: Mirror {
        Mirror(self, children: ["modelType": modelType, "codingPath": codingPath, "reason": reason])
    }
}

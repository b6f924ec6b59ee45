import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix

extension AsyncHTTPClientTransport {
    /// AsyncHTTPClient's and SwiftNIO's errors as the `URLError` codes (or the ``ServiceError``)
    /// that `ServiceError.init(_:)` maps to what a caller can act on, as URLSession's would be.
    /// `limit` is the request's response size limit, which an inflation past the client's own
    /// limit also passed.
    static func mapped(_ error: any Error, limit: Int) -> any Error {
        switch error {
        case is ServiceError, is URLError:
            return error
        case is CancellationError:
            return URLError(.cancelled)
        case let error as HTTPClientError where error == .alreadyShutdown:
            // A client given to the transport, shut down by its owner.
            return ServiceError.transportClosed
        case let error as HTTPClientError:
            return URLError(code(of: error), userInfo: [NSLocalizedDescriptionKey: error.description])
        case is ResponseAccumulator.ResponseTooBigError, NIOHTTPDecompression.DecompressionError.limit:
            return ServiceError.responseTooLarge(limit: limit)
        case is NIOHTTPDecompression.DecompressionError:
            return URLError(.cannotDecodeContentData)
        case HTTPParserError.invalidEOFState:
            // The connection closed before the response ended.
            return URLError(.networkConnectionLost)
        case is HTTPParserError:
            return URLError(.badServerResponse)
        case is NIOConnectionError, is ChannelError:
            return URLError(.cannotConnectToHost)
        case is SocketAddressError:
            return URLError(.cannotFindHost)
        case let error as IOError:
            return URLError(error.errnoCode == ECONNREFUSED ? .cannotConnectToHost : .networkConnectionLost)
        default:
            return URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "\(error)"])
        }
    }

    private static func code(of error: HTTPClientError) -> URLError.Code {
        switch error {
        case .cancelled, .requestStreamCancelled: .cancelled
        case .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: .timedOut
        case .connectTimeout: .cannotConnectToHost
        case .remoteConnectionClosed: .networkConnectionLost
        case .tlsHandshakeTimeout: .secureConnectionFailed
        case .redirectLimitReached, .redirectCycleDetected: .httpTooManyRedirects
        case .invalidURL, .emptyHost, .emptyScheme: .badURL
        default: .badServerResponse
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ServiceError {
    /// Maps a transport failure to the error a caller can act on.
    public init(_ error: any Error) {
        if let serviceError = error as? ServiceError {
            self = serviceError
            return
        }
        guard let urlError = error as? URLError else {
            self = .transport(URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error as NSError]))
            return
        }
        if urlError.isConnectionDroppedByServer {
            // libcurl's words, through FoundationNetworking, for a server that closed the
            // connection mid-body ("transfer closed…"), before answering ("Empty reply…"), or
            // on every one of libcurl's own resends ("Connection died…"); Apple platforms say
            // `networkConnectionLost`.
            self = .noConnection(URLError(.networkConnectionLost, userInfo: urlError.userInfo))
            return
        }
        switch urlError.code {
        case .cancelled:
            self = .cancelled
        case .timedOut:
            self = .timedOut
        case .notConnectedToInternet, .networkConnectionLost, .cannotFindHost, .cannotConnectToHost,
             .dnsLookupFailed, .internationalRoamingOff, .dataNotAllowed, .callIsActive:
            self = .noConnection(urlError)
        case .badURL, .unsupportedURL:
            self = .invalidRequest(reason: "the URL \(urlError.failingURL?.absoluteString ?? "") is not valid")
        default:
            self = .transport(urlError)
        }
    }
}

extension URLError {
    fileprivate var isConnectionDroppedByServer: Bool {
        guard let description = userInfo[NSLocalizedDescriptionKey] as? String else { return false }
        return ["transfer closed", "Empty reply from server", "Connection died"].contains { description.hasPrefix($0) }
    }
}

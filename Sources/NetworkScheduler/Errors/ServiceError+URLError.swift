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
        if let code = urlError.codeForLibcurlMessage {
            self = .noConnection(URLError(code, userInfo: urlError.userInfo))
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
    /// What Apple platforms would say for a lost connection that FoundationNetworking reports
    /// only in libcurl's words, under a generic code: a server that closed the connection
    /// mid-body ("transfer closed…"), before answering ("Empty reply…"), on every one of
    /// libcurl's own resends ("Connection died…"), or while the request was being sent or the
    /// answer read ("Send failure: Broken pipe", "Recv failure: Connection reset by peer"); or
    /// one that refused it, as a restarting server does ("Failed to connect… Couldn't connect
    /// to server").
    fileprivate var codeForLibcurlMessage: URLError.Code? {
        guard let description = userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
        if Self.lostConnectionPrefixes.contains(where: description.hasPrefix) {
            return .networkConnectionLost
        }
        if description.hasPrefix("Failed to connect") || description.hasSuffix("Couldn't connect to server") {
            return .cannotConnectToHost
        }
        return nil
    }

    private static let lostConnectionPrefixes = [
        "transfer closed", "Empty reply from server", "Connection died", "Send failure", "Recv failure",
    ]
}

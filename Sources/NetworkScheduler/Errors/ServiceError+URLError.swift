import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ServiceError {
    /// Maps a transport failure to the error a caller can act on.
    ///
    /// - Parameter error: an error from a transport or from your code.
    public init(_ error: any Error) {
        if let serviceError = error as? ServiceError {
            self = serviceError
            return
        }
        guard let urlError = error as? URLError else {
            self = .underlying(ServiceError.UnderlyingError(error))
            return
        }
        let code = urlError.codeForLibcurlMessage ?? urlError.code
        let mapped = code == urlError.code ? urlError : URLError(code, userInfo: urlError.userInfo)
        switch code {
        case .cancelled:
            self = .cancelled
        case .timedOut:
            self = .timedOut
        case .notConnectedToInternet, .cannotFindHost, .dnsLookupFailed, .internationalRoamingOff,
             .dataNotAllowed, .callIsActive:
            self = .noConnection(mapped)
        case .cannotConnectToHost:
            self = .cannotConnect(mapped)
        case .networkConnectionLost:
            self = .connectionLost(mapped)
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
             .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
             .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            self = .secureConnectionFailed(mapped)
        case .badServerResponse, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
             .zeroByteResource:
            self = .badServerResponse(mapped)
        case .badURL, .unsupportedURL:
            self = .invalidRequest(reason: "the URL is not valid")
        default:
            self = .transport(mapped)
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
    /// A reply that is not HTTP ("Received HTTP/0.9 when not allowed", "Weird server reply",
    /// "Unsupported HTTP version…") comes as `unsupportedURL`, which would blame the caller's
    /// URL: the scheduler sends only http and https URLs, so it is the server's reply.
    fileprivate var codeForLibcurlMessage: URLError.Code? {
        guard let description = userInfo[NSLocalizedDescriptionKey] as? String else { return nil }
        if Self.lostConnectionPrefixes.contains(where: description.hasPrefix) {
            return .networkConnectionLost
        }
        if description.hasPrefix("Failed to connect") || description.hasSuffix("Couldn't connect to server") {
            return .cannotConnectToHost
        }
        if Self.unreadableReplyPrefixes.contains(where: description.hasPrefix) {
            return .badServerResponse
        }
        return nil
    }

    private static let unreadableReplyPrefixes = [
        "Received HTTP/0.9", "Weird server reply", "Unsupported HTTP version", "Invalid status line",
        "Header without colon", "Nul byte in header", "Invalid response header",
    ]

    private static let lostConnectionPrefixes = [
        "transfer closed", "Empty reply from server", "Connection died", "Send failure", "Recv failure",
    ]
}

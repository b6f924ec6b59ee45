import Foundation

extension URL {
    /// The budget's name for this URL's host: scheme, host and port, with the scheme's default
    /// port spelt out, so that `http://h` and `http://h:80` share one budget; nil if it has no
    /// scheme or host. Host lines, health events and the schedule's picture all name a host so.
    package var hostKey: String? {
        guard let scheme = scheme?.lowercased(), let host, !host.isEmpty else { return nil }
        let port = port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
        return "\(scheme)://\(host.lowercased()):\(port)"
    }
}

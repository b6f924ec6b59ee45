import Foundation

extension URL {
    /// The path that names this file whatever links its folders go through: a file reached
    /// through a symlinked folder has the path it has through the real one, so that two names of
    /// one file are one file to the downloads and journals that claim it. The file's own name is
    /// kept as it is: a rename onto a link replaces the link, not what it points to.
    package var claimablePath: String {
        deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(lastPathComponent)
            .standardizedFileURL.path
    }
}

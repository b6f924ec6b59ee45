import Foundation

/// A file the scheduler owns: removed once nothing holds it, which is once no resource, no
/// caller and no call that may still send it does (a caller lets go as it ends, however long
/// the app keeps its handle). An upload spooled to its own file per caller
/// shares a call with identical ones and is sent from the first one's file, which therefore
/// outlives its own caller for as long as the call goes on.
final class TemporaryFile: Sendable, Equatable {
    let url: URL

    init(_ url: URL) { self.url = url }

    deinit { try? FileManager.default.removeItem(at: url) }

    static func == (lhs: TemporaryFile, rhs: TemporaryFile) -> Bool { lhs === rhs }
}

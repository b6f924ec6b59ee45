import Foundation
import Synchronization

/// Prints the scenario step by step, and remembers whether every check held.
final class Narrator: Sendable {
    private let quiet: Bool
    private let failures = Mutex<[String]>([])

    init(quiet: Bool) {
        self.quiet = quiet
    }

    var failed: [String] { failures.withLock { $0 } }

    func step(_ number: Int, _ title: String) {
        say("\n\(number). \(title)")
    }

    func say(_ line: String) {
        if !quiet { show(line) }
    }

    /// Prints a line even when quiet. Unbuffered, so that the progress bar and the lines around
    /// it appear in order.
    func show(_ line: String, terminator: String = "\n") {
        FileHandle.standardOutput.write(Data((line + terminator).utf8))
    }

    /// Records a check; failures are always printed.
    func check(_ holds: Bool, _ claim: String) {
        if holds {
            say("   ✔ \(claim)")
        } else {
            failures.withLock { $0.append(claim) }
            show("   ✘ \(claim)")
        }
    }

    /// Draws a progress bar in place on a terminal, redrawn only when it grows; elsewhere
    /// (a log, CI) prints a line at each quarter.
    func progress(_ done: Int, of total: Int) {
        guard !quiet, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        let previous = (done - 1) * width / total
        if isatty(STDOUT_FILENO) == 1 {
            guard filled != previous || done == total || done == 1 else { return }
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            show("\r   [\(bar)] \(done)/\(total)", terminator: done == total ? "\n" : "")
        } else if done * 4 / total != (done - 1) * 4 / total {
            show("   \(done)/\(total) callers answered")
        }
    }
}

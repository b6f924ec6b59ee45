import ChaosSoak
import Foundation

// The chaos soak, for a long run: `swift run -c release --package-path Stress Stress
// --callers 1000000 --seed 1 --seed 2 --seed 3`. Exits 1 if any run broke a promise.

/// Writes a line at once, even when the output is a file (print buffers it until exit).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

var callers = 100_000
var window = 1_000
var seeds: [UInt64] = []
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--callers": callers = arguments.next().flatMap(Int.init) ?? callers
    case "--seed": if let seed = arguments.next().flatMap(UInt64.init) { seeds.append(seed) }
    case "--window": window = arguments.next().flatMap(Int.init) ?? window
    default:
        say("usage: Stress [--callers N] [--window CALLERS-IN-FLIGHT] [--seed S]…")
        exit(2)
    }
}
if seeds.isEmpty { seeds = [1] }

var allClean = true
for seed in seeds {
    let report = await Soak.run(SoakConfiguration(callers: callers, seed: seed, window: window)) { say("  \($0)") }
    say("\(report)")
    allClean = allClean && report.isClean
}
exit(allClean ? 0 : 1)

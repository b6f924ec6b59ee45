import Foundation
import NetworkScheduler
import NetworkSchedulerOutbox
import SocialApp

// The client process of the outbox's crash test (SampleTests' OutboxCrashTests): it enqueues
// posts through a durable outbox and is killed with SIGKILL at random moments; the next one
// opens the same folder and goes on.
//
//   outbox-child enqueue FOLDER BASE_URL PREFIX FIRST COUNT
//       logs in, then enqueues posts "PREFIX FIRST" … "PREFIX FIRST+COUNT-1", printing
//       "ENQUEUED <index>" once each enqueue returned, then waits to be killed;
//   outbox-child drain FOLDER BASE_URL
//       logs in, sends what is pending, prints "DRAINED" and exits.
// Each outcome told prints "TOLD <text>".

/// Writes a line at once, unbuffered: a kill must not lose what was said before it.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let baseURL = URL(string: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: outbox-child enqueue|drain FOLDER BASE_URL [PREFIX FIRST COUNT]\n".utf8))
    exit(2)
}
let api = SocialAPI(baseURL: baseURL)
do {
    _ = try await api.auth.logIn(Credentials(username: "ada", password: "secret"))
    let outbox = try Outbox(folder: URL(fileURLWithPath: arguments[2]), client: api.client)
    outbox.register(.newPost) { draft, _ in say("TOLD \(draft.text)") }
    if arguments[1] == "enqueue", arguments.count == 7, let first = Int(arguments[5]), let count = Int(arguments[6]) {
        for index in first..<(first + count) {
            try outbox.enqueue(PostDraft(text: "\(arguments[4]) \(index)"), as: .newPost)
            say("ENQUEUED \(index)")
        }
        // Waits to be killed, sending meanwhile; bounded, should nobody kill it.
        try await Task.sleep(for: .seconds(60))
    } else {
        for _ in 0..<3_000 where !outbox.pending.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        say(outbox.pending.isEmpty ? "DRAINED" : "NOT DRAINED \(outbox.pending.count)")
    }
} catch {
    say("FAILED \(error)")
    exit(1)
}

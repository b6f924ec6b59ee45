import Dispatch
import Foundation
import NetworkScheduler

/// What the event monitors heard of each caller, checked against the contract of
/// `RequestEvent.Monitor`: every caller heard at all is heard to end exactly once, and to begin
/// (`enqueued` or `joined`) at most once and never after its end. A byte per caller ID, so
/// that a million callers cost a megabyte.
final class CallerStories: RequestEvent.Monitor {
    private struct State {
        /// By ID number: how many begins (bits 0–1) and ends (bits 2–3) were heard, saturating
        /// at 3, and whether a begin came after an end (bit 4).
        var stories: [UInt8] = []
        /// Callers heard to begin and not yet to end.
        var open = 0
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())

    func record(_ event: RequestEvent) {
        switch event {
        case .enqueued(let caller), .joined(let caller):
            update(caller.id) { story in
                if story & 0b1100 != 0 { story |= 0b1_0000 }
                if story & 0b11 < 3 { story += 1 }
                return story & 0b1111 == 0b01 ? 1 : 0
            }
        case .succeeded(let caller, _), .servedFromCache(let caller, _), .failed(let caller, _, _), .cancelled(let caller):
            update(caller.id) { story in
                if story & 0b1100 < 0b1100 { story += 0b100 }
                return story & 0b1111 == 0b0101 ? -1 : 0
            }
        case .started, .retried, .promoted, .outcomeKept, .hostHealthChanged, .progressed, .revalidated:
            break
        }
    }

    /// Callers heard of, those heard to end once, and those whose story broke the contract:
    /// begun and never ended, ended twice, begun twice, or begun after their end.
    var summary: (heard: Int, ended: Int, unbalanced: Int) {
        state.withLock { state in
            var (heard, ended, unbalanced) = (0, 0, 0)
            for story in state.stories where story != 0 {
                heard += 1
                let (begins, ends) = (story & 0b11, (story >> 2) & 0b11)
                if ends == 1 { ended += 1 }
                if ends != 1 || begins > 1 || story & 0b1_0000 != 0 { unbalanced += 1 }
            }
            return (heard, ended, unbalanced)
        }
    }

    /// Waits until every caller heard to begin has been heard to end, or `timeout` seconds
    /// pass: a caller's end is told to the monitors just after its completion has run.
    func settled(timeout: TimeInterval) async -> Bool {
        await withCheckedContinuation { continuation in
            let isSettled = state.withLock { state in
                if state.open == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            guard !isSettled else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [state] in
                for waiter in state.withLock({ state in defer { state.waiters = [] }; return state.waiters }) {
                    waiter.resume(returning: false)
                }
            }
        }
    }

    /// Changes the story of `id`; `change` returns how it changed the count of open stories.
    private func update(_ id: RequestHandle.ID, _ change: (inout UInt8) -> Int) {
        // An ID prints as `#` and its number, unique in the process.
        guard let number = Int(id.description.dropFirst()) else { return }
        let settled = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            if number >= state.stories.count {
                state.stories.append(contentsOf: repeatElement(0, count: max(number + 1 - state.stories.count, state.stories.count)))
            }
            state.open += change(&state.stories[number])
            guard state.open == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in settled { waiter.resume(returning: true) }
    }
}

import Foundation

/// Runs many concurrent callers of an app's own code (a service, a model controller) in an
/// order drawn from a seed: which caller starts first, how long each lets others run before
/// it calls, and which ones are cancelled, and when. A failing run names its seed; running that
/// seed again replays the same choices.
///
/// ```swift
/// let run = await Interleaver(seed: 7).run(callers: 50, cancelling: 0.2) { _ in
///     try await model.submit(draft)
/// }
/// #expect(run.unfinished.isEmpty, "\(run)")
/// let report = await audit.report(for: scheduler)
/// #expect(report.networkCalls("POST /v1/posts") == 1, "\(report)")
/// ```
public struct Interleaver: Sendable {
    /// The seed every choice follows from.
    public let seed: UInt64

    /// An interleaver whose choices follow from `seed`.
    ///
    /// - Parameter seed: the seed every choice follows from.
    public init(seed: UInt64) {
        self.seed = seed
    }

    /// Runs `callers` calls of `body` at once, each in a task of its own, and waits for them
    /// all, at most `timeout` seconds.
    ///
    /// - Parameters:
    ///   - callers: how many calls; each gets its index.
    ///   - fraction: the share of callers whose task is cancelled, each after a few turns
    ///     drawn from the seed (before it calls, or while it waits).
    ///   - timeout: how long to wait for the callers; those still running then are listed in
    ///     ``Run/unfinished`` and cancelled.
    ///   - body: the code under test, as one caller runs it.
    public func run<Value: Sendable>(
        callers: Int,
        cancelling fraction: Double = 0,
        timeout: TimeInterval = 60,
        _ body: @escaping @Sendable (Int) async throws -> Value
    ) async -> Run<Value> {
        var random = SeededGenerator(seed: seed)
        let order = (0..<max(0, callers)).shuffled(using: &random)
        let plans = order.map { index in
            Plan(index: index,
                 turnsBeforeCalling: Int.random(in: 0...3, using: &random),
                 cancelAfterTurns: Double.random(in: 0..<1, using: &random) < fraction
                    ? Int.random(in: 0...8, using: &random) : nil)
        }
        let outcomes = EventLog<(Int, Outcome<Value>)>()
        var tasks: [Task<Void, Never>] = []
        for plan in plans {
            let task = Task {
                for _ in 0..<plan.turnsBeforeCalling { await Task.yield() }
                let outcome: Outcome<Value>
                do {
                    outcome = .returned(try await body(plan.index))
                } catch {
                    outcome = .threw(error)
                }
                outcomes.append((plan.index, outcome))
            }
            tasks.append(task)
            if let turns = plan.cancelAfterTurns {
                Task {
                    for _ in 0..<turns { await Task.yield() }
                    task.cancel()
                }
            }
        }
        let ended = await outcomes.arrivals(plans.count, within: timeout)
        for task in tasks { task.cancel() }
        var byCaller = [Outcome<Value>?](repeating: nil, count: max(0, callers))
        for (index, outcome) in ended { byCaller[index] = outcome }
        return Run(seed: seed, outcomes: byCaller,
                   cancelled: Set(plans.compactMap { $0.cancelAfterTurns == nil ? nil : $0.index }))
    }

    private struct Plan {
        let index: Int
        let turnsBeforeCalling: Int
        let cancelAfterTurns: Int?
    }
}

extension Interleaver {
    /// How one caller ended.
    public enum Outcome<Value: Sendable>: Sendable {
        /// The code under test returned this.
        case returned(Value)
        /// The code under test threw this.
        case threw(any Error)
    }

    /// What one run did: each caller's outcome, by index.
    public struct Run<Value: Sendable>: Sendable, CustomStringConvertible {
        /// The seed that replays this run.
        public let seed: UInt64
        /// Each caller's outcome; nil for a caller that had not ended within the timeout.
        public let outcomes: [Outcome<Value>?]
        /// The callers whose task was cancelled.
        public let cancelled: Set<Int>

        /// The values the callers returned, in caller order.
        public var values: [Value] {
            outcomes.compactMap { outcome in
                if case .returned(let value) = outcome { return value }
                return nil
            }
        }

        /// The errors the callers threw, in caller order.
        public var errors: [any Error] {
            outcomes.compactMap { outcome in
                if case .threw(let error) = outcome { return error }
                return nil
            }
        }

        /// Callers that had not ended within the timeout: a hang in the code under test.
        public var unfinished: [Int] { outcomes.indices.filter { outcomes[$0] == nil } }

        /// The seed, and how the callers ended.
        public var description: String {
            "seed \(seed): \(outcomes.count) caller(s), \(values.count) returned, \(errors.count) threw, "
                + "\(cancelled.count) cancelled, \(unfinished.count) unfinished"
                + (unfinished.isEmpty ? "" : " (\(unfinished.prefix(10).map(String.init).joined(separator: " ")))")
        }
    }
}

import NIOConcurrencyHelpers

/// What a route does wrong, on purpose, so that clients can be tested against real failures.
public struct Fault: Codable, Sendable, Equatable {
    /// Waits this long before answering.
    public var latencyMilliseconds: Int?
    /// Answers with this status and a JSON `message` instead of the real response.
    public var status: Int?
    /// Answers 200 with a body that is not valid JSON.
    public var malformedJSON: Bool
    /// Answers with an HTML error page (status 500 unless `status` says otherwise).
    public var htmlErrorPage: Bool
    /// Sends the headers and part of the body, then closes the connection.
    public var closeMidBody: Bool
    /// Adds a `Retry-After` header with this many seconds.
    public var retryAfterSeconds: Int?
    /// Closes the connection without answering.
    public var resetConnection: Bool
    /// Applies the fault to this many requests, then answers normally again.
    public var failFirst: Int?
    /// Answers 302 with this `Location`: another origin, or one a client cannot parse.
    public var redirectLocation: String?
    /// Sends a 200 JSON body one byte at a time, this many milliseconds apart (600 bytes).
    public var trickleMilliseconds: Int?
    /// Answers 401 with `WWW-Authenticate: Basic`, which asks for a password.
    public var basicChallenge: Bool
    /// Answers 200 with `Content-Encoding: gzip` and a body that inflates to this many zeros.
    public var gzipBombBytes: Int?
    /// Adds a `Set-Cookie` header with this value to the answer, whatever it is.
    public var setCookie: String?
    /// Reads an upload's body slowly: pauses this many milliseconds after each 64 KiB.
    public var readPauseMilliseconds: Int?
    /// Sends this many bytes of an export's body or a live feed, then closes the connection.
    public var cutAfterBytes: Int?
    /// Answers an export's `Range` with the whole body (200), as a server without ranges does.
    public var ignoresRange: Bool
    /// Answers an export's `Range` with a range that starts 100 bytes before the one asked for.
    public var wrongRange: Bool
    /// Answers a live feed with one line of 100 MB.
    public var endlessLine: Bool
    /// Sends an export's body slowly: pauses this many milliseconds after each 64 KiB.
    public var bodyPauseMilliseconds: Int?

    public init(
        latencyMilliseconds: Int? = nil,
        status: Int? = nil,
        malformedJSON: Bool = false,
        htmlErrorPage: Bool = false,
        closeMidBody: Bool = false,
        retryAfterSeconds: Int? = nil,
        resetConnection: Bool = false,
        failFirst: Int? = nil,
        redirectLocation: String? = nil,
        trickleMilliseconds: Int? = nil,
        basicChallenge: Bool = false,
        gzipBombBytes: Int? = nil,
        setCookie: String? = nil,
        readPauseMilliseconds: Int? = nil,
        cutAfterBytes: Int? = nil,
        ignoresRange: Bool = false,
        wrongRange: Bool = false,
        endlessLine: Bool = false,
        bodyPauseMilliseconds: Int? = nil
    ) {
        self.latencyMilliseconds = latencyMilliseconds
        self.status = status
        self.malformedJSON = malformedJSON
        self.htmlErrorPage = htmlErrorPage
        self.closeMidBody = closeMidBody
        self.retryAfterSeconds = retryAfterSeconds
        self.resetConnection = resetConnection
        self.failFirst = failFirst
        self.redirectLocation = redirectLocation
        self.trickleMilliseconds = trickleMilliseconds
        self.basicChallenge = basicChallenge
        self.gzipBombBytes = gzipBombBytes
        self.setCookie = setCookie
        self.readPauseMilliseconds = readPauseMilliseconds
        self.cutAfterBytes = cutAfterBytes
        self.ignoresRange = ignoresRange
        self.wrongRange = wrongRange
        self.endlessLine = endlessLine
        self.bodyPauseMilliseconds = bodyPauseMilliseconds
    }

    /// The fault the request being answered took, if any.
    @TaskLocal static var taken: Fault?

    /// A route that only answers slowly.
    public static func latency(milliseconds: Int) -> Fault { Fault(latencyMilliseconds: milliseconds) }
}

/// The faults in force, per route; tests change them while the server runs.
public final class FaultBoard: Sendable {
    private let exportVersion = NIOLockedValueBox(1)

    /// The version of every export: a new one changes their bytes and their `ETag`, as a file
    /// rewritten on the server between two attempts of a download.
    public var exportsVersion: Int {
        get { exportVersion.withLockedValue { $0 } }
        set { exportVersion.withLockedValue { $0 = newValue } }
    }

    /// How every export answers ranges, whatever the faults of each request.
    public struct ExportQuirks: Sendable, Equatable {
        /// `Content-Range: bytes A-B/*`: the whole length is not given (valid, RFC 9110 §14.4).
        public var withholdsLength = false
        /// No `ETag`: nothing names the version, so no `If-Range` can ask for the rest of it.
        public var namesNoVersion = false
        /// A range after the first byte is answered from the next version, under its own `ETag`,
        /// whatever `If-Range` names: as a hostile or broken server does.
        public var changesVersionOnResume = false

        public init(withholdsLength: Bool = false, namesNoVersion: Bool = false, changesVersionOnResume: Bool = false) {
            self.withholdsLength = withholdsLength
            self.namesNoVersion = namesNoVersion
            self.changesVersionOnResume = changesVersionOnResume
        }
    }

    private let quirks = NIOLockedValueBox(ExportQuirks())

    /// How every export answers ranges.
    public var exportQuirks: ExportQuirks {
        get { quirks.withLockedValue { $0 } }
        set { quirks.withLockedValue { $0 = newValue } }
    }

    private let faults = NIOLockedValueBox<[Route: (fault: Fault, applied: Int)]>([:])
    private let held = NIOLockedValueBox<[Route: [CheckedContinuation<Void, Never>]]>([:])

    /// Holds every request arriving at `route` until ``release(_:)``: a gate for tests.
    public func hold(_ route: Route) {
        held.withLockedValue { held in
            if held[route] == nil { held[route] = [] }
        }
    }

    /// Lets the requests held at `route` through, and stops holding it.
    public func release(_ route: Route) {
        let waiting = held.withLockedValue { $0.removeValue(forKey: route) ?? [] }
        for request in waiting { request.resume() }
    }

    /// Lets the oldest request held at `route` through, and goes on holding the others and
    /// those that arrive later: a gate that opens for one request at a time. Returns whether
    /// one was held.
    @discardableResult
    public func releaseOldest(_ route: Route) -> Bool {
        let oldest = held.withLockedValue { held -> CheckedContinuation<Void, Never>? in
            guard held[route]?.isEmpty == false else { return nil }
            return held[route]?.removeFirst()
        }
        oldest?.resume()
        return oldest != nil
    }

    /// Waits while `route` is held.
    func passGate(_ route: Route) async {
        await withCheckedContinuation { continuation in
            let open = held.withLockedValue { held -> Bool in
                guard held[route] != nil else { return true }
                held[route]?.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    /// Sets (or, with nil, clears) the fault of one route.
    public subscript(route: Route) -> Fault? {
        get { faults.withLockedValue { $0[route]?.fault } }
        set { faults.withLockedValue { $0[route] = newValue.map { ($0, 0) } } }
    }

    /// Clears every fault.
    public func clear() {
        faults.withLockedValue { $0 = [:] }
    }

    /// The fault to apply to one arriving request, counting it against `failFirst`.
    func take(for route: Route) -> Fault? {
        faults.withLockedValue { faults in
            guard let (fault, applied) = faults[route] else { return nil }
            if let limit = fault.failFirst, applied >= limit { return nil }
            faults[route] = (fault, applied + 1)
            return fault
        }
    }
}

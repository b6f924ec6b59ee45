import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Downloads through the scheduler, over the stub transport: the body saved to its file,
/// resumed only from a version the server named, never spliced, within its limit.
@Suite struct DownloadTests {
    /// A folder of its own for one test, removed by `cleanUp`.
    private static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("DownloadTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    private static func cleanUp(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    private static let body = Data((0..<1_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })

    private static func contents(of url: URL) -> Data? {
        try? Data(contentsOf: url)
    }

    /// A harness that retries a GET once more after a lost connection, at once.
    private static func retrying(reply: @escaping @Sendable (URLRequest) -> StubResponse) -> Harness {
        Harness(retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0), reply: reply)
    }

    @Test func theBodyIsSavedToItsDestinationWhichIsTheModel() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness { _ in .respond(body: Self.body, headers: ["Content-Length": "1000"]) }
        let told = EventLog<TransferProgress>()

        let saved = try await harness.api.value(for: .download("export", to: destination), progress: { told.append($0) })

        #expect(saved == destination)
        #expect(Self.contents(of: destination) == Self.body)
        #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))
        #expect(told.elements.last == .received(1_000, of: 1_000))
        #expect(harness.events.progressed.elements.last?.progress == .received(1_000, of: 1_000), "and so are the monitors")
    }

    @Test func aDownloadCutShortResumesFromTheVersionTheServerNamed() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let requests = EventLog<URLRequest>()
        let harness = Self.retrying { request in
            requests.append(request)
            guard let range = request.value(forHTTPHeaderField: "Range") else {
                return .breaks(body: Self.body.prefix(400), headers: ["Content-Length": "1000", "ETag": "\"v1\""])
            }
            #expect(range == "bytes=400-")
            #expect(request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
            return .respond(status: 206, body: Self.body.dropFirst(400),
                            headers: ["Content-Range": "bytes 400-999/1000", "Content-Length": "600", "ETag": "\"v1\""])
        }

        _ = try await harness.api.value(for: .download("export", to: destination))

        #expect(requests.count == 2)
        #expect(Self.contents(of: destination) == Self.body)
    }

    @Test func aServerThatIgnoresTheRangeStartsTheFileOverNeverSplicingIt() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let newVersion = Data(repeating: 7, count: 1_200)
        let harness = Self.retrying { request in
            guard request.value(forHTTPHeaderField: "Range") != nil else {
                return .breaks(body: Self.body.prefix(400), headers: ["Content-Length": "1000", "ETag": "\"v1\""])
            }
            // The file changed (If-Range no longer matches), or ranges are not served: all of it.
            return .respond(status: 200, body: newVersion, headers: ["Content-Length": "1200", "ETag": "\"v2\""])
        }

        _ = try await harness.api.value(for: .download("export", to: destination))

        #expect(Self.contents(of: destination) == newVersion)
    }

    @Test func anotherRangeThanAskedFailsAndTheNextDownloadStartsOver() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let answers = Locked(0)
        let harness = Self.retrying { request in
            let answer = answers.withLock { count in
                count += 1
                return count
            }
            switch answer {
            case 1: return .breaks(body: Self.body.prefix(400), headers: ["Content-Length": "1000", "ETag": "\"v1\""])
            case 2: return .respond(status: 206, body: Self.body.dropFirst(300),
                                    headers: ["Content-Range": "bytes 300-999/1000", "ETag": "\"v1\""])
            default:
                #expect(request.value(forHTTPHeaderField: "Range") == nil, "the partial file was removed")
                return .respond(body: Self.body, headers: ["ETag": "\"v1\""])
            }
        }

        await #expect {
            try await harness.api.value(for: .download("export", to: destination))
        } throws: { error in
            (error as? ServiceError)?.caseName == "badServerResponse"
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path), "no spliced file")
        #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))

        _ = try await harness.api.value(for: .download("export", to: destination))
        #expect(Self.contents(of: destination) == Self.body)
    }

    @Test func withoutAVersionACutDownloadIsNotKept() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness { _ in .breaks(body: Self.body.prefix(400), headers: ["Content-Length": "1000"]) }

        await #expect {
            try await harness.api.value(for: .download("export", to: destination))
        } throws: { error in
            (error as? ServiceError)?.caseName == "connectionLost"
        }
        #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path),
                "nothing to resume from: the server named no version")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aBodyPastTheLimitFailsAndLeavesNoFileBehind() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness { _ in .respond(body: Self.body, headers: ["ETag": "\"v1\""]) }

        await #expect(throws: ServiceError.responseTooLarge(limit: 600)) {
            try await harness.api.value(for: .download("export", to: destination, maximumSize: 600))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aLengthPastTheLimitFailsBeforeAByteIsWritten() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness { _ in .respond(body: Self.body, headers: ["Content-Length": "1000"]) }

        await #expect(throws: ServiceError.responseTooLarge(limit: 600)) {
            try await harness.api.value(for: .download("export", to: destination, maximumSize: 600))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aDownloadWithoutItsOwnLimitIsNotHeldToTheLimitForBodiesInMemory() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness(reply: { _ in .respond(body: Self.body, headers: ["Content-Length": "\(Self.body.count)"]) },
                              configure: { $0.maximumResponseSize = 100 })

        let file = try await harness.api.value(for: .download("export", to: destination))

        #expect(Self.body.count > 100)
        #expect(Self.contents(of: file) == Self.body)
    }

    @Test func anErrorsBodyBeyondTheLimitForBodiesInMemoryIsStillRefused() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let harness = Harness(reply: { _ in .respond(status: 500, body: Self.body) },
                              configure: { $0.maximumResponseSize = 100 })

        await #expect(throws: ServiceError.responseTooLarge(limit: 100)) {
            try await harness.api.value(for: .download("export", to: destination))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func anErrorStatusLeavesTheDestinationAsItWasAndCarriesTheServersMessage() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        try Data("the old export".utf8).write(to: destination)
        let harness = Harness { _ in .json(#"{"message": "no such export"}"#, status: 404) }

        await #expect {
            try await harness.api.value(for: .download("export", to: destination))
        } throws: { error in
            guard case .server(let response)? = error as? ServiceError else { return false }
            return response.statusCode == 404 && response.message == "no such export"
        }
        #expect(Self.contents(of: destination) == Data("the old export".utf8))
    }

    @Test func aDestinationInAFolderThatDoesNotExistFailsUnsent() async {
        let harness = Harness()
        let destination = URL(fileURLWithPath: "/no/such/folder/export.bin")
        await #expect(throws: ServiceError.invalidRequest(reason: "the destination's folder folder does not exist")) {
            try await harness.api.value(for: .download("export", to: destination))
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func identicalDownloadsShareOneCallAndAnotherDestinationIsAnother() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let first = folder.appendingPathComponent("a.bin")
        let second = folder.appendingPathComponent("b.bin")
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<URL>()

        harness.api.send(.download("export", to: first), completion: outcomes.completion("tap"))
        harness.api.send(.download("export", to: first), completion: outcomes.completion("double tap"))
        harness.api.send(.download("export", to: second), completion: outcomes.completion("elsewhere"))
        await harness.transport.arrivals.wait(for: 2)
        harness.transport.release(with: .respond(body: Self.body))
        harness.transport.release(with: .respond(body: Self.body))

        let results = await outcomes.wait(for: 3)
        #expect(results["tap"]?.success == first && results["double tap"]?.success == first)
        #expect(results["elsewhere"]?.success == second)
        #expect(harness.transport.arrivals.count == 2)
        #expect(Self.contents(of: first) == Self.body && Self.contents(of: second) == Self.body)
    }

    /// One file under two names, through a symlinked folder: two downloads of two versions
    /// wrote it at once, and one reported success holding the other's bytes or a mix.
    @Test func oneFileUnderTwoNamesIsWrittenByOneDownloadAtATime() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let real = folder.appendingPathComponent("real")
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<URL>()

        // Given version A on its way to real/f.bin.
        harness.api.send(.download("export/a", to: real.appendingPathComponent("f.bin")), completion: outcomes.completion("A"))
        await harness.transport.arrivals.wait(for: 1)

        // When version B is asked for link/f.bin, the same file, then it is refused unsent.
        harness.api.send(.download("export/b", to: link.appendingPathComponent("f.bin")), completion: outcomes.completion("B"))
        let refused = await outcomes.wait(for: 1)
        #expect(refused["B"]?.failure == .invalidRequest(reason: "another download is writing to f.bin"))
        harness.transport.release(with: .respond(body: Self.body))

        // And A's file holds A's bytes.
        let results = await outcomes.wait(for: 2)
        #expect(results["A"]?.success == real.appendingPathComponent("f.bin"))
        #expect(Self.contents(of: real.appendingPathComponent("f.bin")) == Self.body)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func progressCountsFromWhatAResumedDownloadHad() async throws {
        let folder = try Self.folder()
        defer { Self.cleanUp(folder) }
        let destination = folder.appendingPathComponent("export.bin")
        let large = Data(repeating: 1, count: 300_000)
        let harness = Self.retrying { request in
            guard request.value(forHTTPHeaderField: "Range") != nil else {
                return .breaks(body: large.prefix(150_000), headers: ["Content-Length": "300000", "ETag": "\"v1\""])
            }
            return .respond(status: 206, body: large.dropFirst(150_000), headers: ["Content-Range": "bytes 150000-299999/300000"])
        }
        let told = EventLog<TransferProgress>()

        _ = try await harness.api.value(for: .download("export", to: destination), progress: { told.append($0) })

        #expect(told.elements.contains(.received(150_000, of: 300_000)), "the resumed attempt starts where the first stopped")
        #expect(told.elements.last == .received(300_000, of: 300_000))
        #expect(Self.contents(of: destination) == large)
    }
}

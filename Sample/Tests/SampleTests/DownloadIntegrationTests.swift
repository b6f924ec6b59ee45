import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import SocialApp
import SocialServer
import Testing

extension HeavyTests {
    /// Downloads over real sockets against the SocialServer, over each transport: an export saved
    /// whole, resumed after the server drops the connection, started over when the server's file
    /// changed or it ignores ranges, and never spliced from a wrong range.
    @Suite struct DownloadIntegrationTests {
        private static let size = 4 * 1_024 * 1_024

        /// The bytes of an export of `size` bytes at `version`, as the server makes them.
        private static func export(version: Int, size: Int = size) -> Data {
            ExportContent.bytes(0..<size, version: version)
        }

        /// The first byte a request asked for: 0 without a `Range`. Over URLSession on Linux a
        /// download asks for its body in parts (`bytes=START-END`), over AsyncHTTPClient whole.
        private static func start(of range: String?) -> Int? {
            guard let range else { return 0 }
            guard range.hasPrefix("bytes=") else { return nil }
            return Int(range.dropFirst("bytes=".count).prefix { $0 != "-" })
        }

        /// A folder of the test's own, removed afterwards.
        private static func withFolder(_ body: (URL) async throws -> Void) async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("DownloadIntegrationTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            try await body(folder)
        }

        /// Logs in and downloads an export the server cuts short, without a retry: returns its
        /// destination, beside which its partial file waits.
        private static func downloadCutShort(in folder: URL, by fixture: Fixture) async throws -> URL {
            _ = try await fixture.logIn()
            fixture.server.faults[.export] = Fault(failFirst: 1, cutAfterBytes: 2_000_000)
            let destination = folder.appendingPathComponent("export.bin")
            await #expect {
                try await fixture.api.client.value(for: .export("2026", bytes: size, to: destination))
            } throws: { error in
                (error as? ServiceError)?.caseName == "connectionLost"
            }
            #expect(FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))
            return destination
        }

        @Test(arguments: TransportKind.allCases)
        func anExportIsSavedWholeWithProgressToItsLastByte(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    let destination = folder.appendingPathComponent("export.bin")
                    let steps = NIOLockedValueBox<[TransferProgress]>([])

                    let saved = try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination)) { step in
                        steps.withLockedValue { $0.append(step) }
                    }

                    #expect(saved == destination)
                    #expect(try Data(contentsOf: destination) == Self.export(version: 1))
                    let told = steps.withLockedValue { $0 }
                    #expect(told.last == .received(Int64(Self.size), of: Int64(Self.size)))
                    #expect((1...101).contains(told.count), "about a step per hundredth: \(told.count)")
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aDownloadTheServerCutsShortIsResumedFromWhereItStopped(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0)) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults[.export] = Fault(failFirst: 1, cutAfterBytes: 2_000_000)
                    let destination = folder.appendingPathComponent("export.bin")

                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination))

                    #expect(try Data(contentsOf: destination) == Self.export(version: 1))
                    let ranges = fixture.server.arrivals.all.filter { $0.route == .export }.map(\.range)
                    #expect(ranges.count == 2)
                    #expect(ranges.first.flatMap(Self.start(of:)) == 0)
                    #expect(ranges.last.flatMap(Self.start(of:)).map { $0 > 0 && $0 <= 2_000_000 } == true,
                            "resumed from what the first attempt had written: \(String(describing: ranges.last))")
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aFileChangedOnTheServerIsDownloadedAnewNeverSpliced(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport) { fixture in
                    let destination = try await Self.downloadCutShort(in: folder, by: fixture)

                    fixture.server.faults.exportsVersion = 2
                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination))

                    #expect(try Data(contentsOf: destination) == Self.export(version: 2))
                    #expect(fixture.server.arrivals.all.last?.range != nil, "it asked to resume, with If-Range")
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aServerThatIgnoresRangesGivesTheWholeFileAgain(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport) { fixture in
                    let destination = try await Self.downloadCutShort(in: folder, by: fixture)

                    fixture.server.faults[.export] = Fault(ignoresRange: true)
                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination))

                    #expect(try Data(contentsOf: destination) == Self.export(version: 1))
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func anotherRangeThanAskedFailsAndLeavesNothingToSplice(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport) { fixture in
                    let destination = try await Self.downloadCutShort(in: folder, by: fixture)

                    fixture.server.faults[.export] = Fault(failFirst: 1, wrongRange: true)
                    await #expect {
                        try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination))
                    } throws: { error in
                        (error as? ServiceError)?.caseName == "badServerResponse"
                    }
                    #expect(!FileManager.default.fileExists(atPath: destination.path))
                    #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))

                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.size, to: destination))
                    #expect(try Data(contentsOf: destination) == Self.export(version: 1))
                    #expect(fixture.server.arrivals.all.last.flatMap { Self.start(of: $0.range) } == 0, "started over")
                }
            }
        }

        /// Larger than one part of a download over URLSession on Linux (8 MiB), so that a part's
        /// end is not the body's.
        private static let largerThanAPart = 9_000_000

        /// `Content-Range: bytes A-B/*` is valid: the whole length is unknown, not B + 1. The
        /// first part's end was taken for the body's, and a file of 9 MB succeeded with the
        /// first 8 MiB (over URLSession; over AsyncHTTPClient the resume's `*` after a cut).
        @Test(arguments: TransportKind.allCases)
        func aServerThatWithholdsTheLengthGetsAskedUntilTheBodyEnds(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0)) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults.exportQuirks = FaultBoard.ExportQuirks(withholdsLength: true)
                    fixture.server.faults[.export] = Fault(failFirst: 1, cutAfterBytes: 300_000)
                    let destination = folder.appendingPathComponent("export.bin")

                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.largerThanAPart, to: destination))

                    #expect(try Data(contentsOf: destination) == Self.export(version: 1, size: Self.largerThanAPart))
                }
            }
        }

        /// Without a version, the rest cannot be asked for by it: every attempt asked for the
        /// first part again, and a file larger than a part was never delivered.
        @Test(arguments: TransportKind.allCases)
        func aServerThatNamesNoVersionStillDeliversAFileLargerThanAPart(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults.exportQuirks = FaultBoard.ExportQuirks(namesNoVersion: true)
                    let destination = folder.appendingPathComponent("export.bin")

                    _ = try await fixture.api.client.value(for: .export("2026", bytes: Self.largerThanAPart, to: destination))

                    #expect(try Data(contentsOf: destination) == Self.export(version: 1, size: Self.largerThanAPart))
                }
            }
        }

        /// A 206 whose `ETag` is not the one `If-Range` named is a part of another file: it was
        /// written after the first version's bytes, and the download succeeded with both.
        @Test(arguments: TransportKind.allCases)
        func aPartOfAnotherVersionFailsAndLeavesNothingSpliced(over transport: TransportKind) async throws {
            try await Self.withFolder { folder in
                try await Fixture.with(over: transport, retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0, maxDelay: 0)) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults.exportQuirks = FaultBoard.ExportQuirks(changesVersionOnResume: true)
                    // Over AsyncHTTPClient, which asks for the whole body, a cut makes the resume.
                    fixture.server.faults[.export] = Fault(failFirst: 1, cutAfterBytes: 300_000)
                    let destination = folder.appendingPathComponent("export.bin")

                    await #expect {
                        try await fixture.api.client.value(for: .export("2026", bytes: Self.largerThanAPart, to: destination))
                    } throws: { error in
                        (error as? ServiceError)?.caseName == "badServerResponse"
                    }
                    #expect(!FileManager.default.fileExists(atPath: destination.path))
                    #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))
                }
            }
        }
    }
}

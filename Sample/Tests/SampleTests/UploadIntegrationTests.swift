import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import SocialApp
import SocialServer
import Testing

extension HeavyTests {
    /// Uploads over real sockets against the SocialServer, over each transport: a file streamed
    /// from disk, a multipart form, their progress, and servers that stop reading or hang up.
    @Suite struct UploadIntegrationTests {
        /// A file of `count` bytes of a repeating pattern, in a folder of its own that `body` may
        /// use, removed afterwards; and the checksum the server should read.
        private static func withFile(
            bytes count: Int, named name: String = "upload.bin",
            _ body: (URL, String) async throws -> Void
        ) async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("UploadIntegrationTests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let block = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            var data = Data(capacity: count)
            while data.count < count { data.append(block.prefix(count - data.count)) }
            let url = folder.appendingPathComponent(name)
            try data.write(to: url)
            var checksum = Checksum()
            checksum.add(data)
            try await body(url, checksum.hex)
        }

        @Test(arguments: TransportKind.allCases)
        func aFileReachesTheServerWholeWithProgressToItsLastByteAndADoubleTapSendsItOnce(over transport: TransportKind) async throws {
            try await Self.withFile(bytes: 8 * 1_024 * 1_024) { file, checksum in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    let steps = NIOLockedValueBox<[TransferProgress]>([])
                    async let tap = fixture.api.client.value(for: .upload(file)) { step in steps.withLockedValue { $0.append(step) } }
                    async let doubleTap = fixture.api.client.value(for: .upload(file))
                    let (receipt, second) = try await (tap, doubleTap)

                    #expect(receipt == UploadReceipt(bytes: 8 * 1_024 * 1_024, checksum: checksum))
                    #expect(second == receipt)
                    #expect(fixture.server.arrivals.count(.upload) == 1)
                    let told = steps.withLockedValue { $0 }
                    #expect(told.last == TransferProgress(bytesSent: 8 * 1_024 * 1_024, bytesExpectedToSend: 8 * 1_024 * 1_024))
                    #expect(zip(told, told.dropFirst()).allSatisfy { $0.bytesSent < $1.bytesSent }, "steps only go forward")
                    #expect((1...101).contains(told.count), "about a step per hundredth: \(told.count)")
                }
            }
        }

        // One transport at a time: the check for a form's temporary file left behind would see the
        // other's, in flight.
        @Test(.serialized, arguments: TransportKind.allCases)
        func aFormOfFieldsAndAFileIsReadByTheServerAsItWasSent(over transport: TransportKind) async throws {
            try await Self.withFile(bytes: 1_500_000, named: "me.jpg") { photo, checksum in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    var form = MultipartForm()
                    form.append("Ada Lovelace", named: "name")
                    form.append(fileAt: photo, named: "avatar", contentType: "image/jpeg")
                    form.append(Data("{}".utf8), named: "meta\"data", filename: "meta.json", contentType: "application/json")

                    let receipt = try await fixture.api.client.value(for: .avatar(form))

                    #expect(receipt.fields == ["name": "Ada Lovelace"])
                    #expect(receipt.files == [
                        FormReceipt.File(field: "avatar", filename: "me.jpg", contentType: "image/jpeg", bytes: 1_500_000, checksum: checksum),
                        FormReceipt.File(field: "meta%22data", filename: "meta.json", contentType: "application/json", bytes: 2,
                                         checksum: Self.checksum(of: Data("{}".utf8))),
                    ])
                    let leftovers = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)
                        .filter { $0.hasSuffix(".multipart") }
                    #expect(leftovers.isEmpty, "the form's temporary file is removed: \(leftovers)")
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func anUploadTheServerStopsReadingEndsAtItsStallDeadline(over transport: TransportKind) async throws {
            // Larger than what the sockets' buffers take in while nobody reads.
            try await Self.withFile(bytes: 48 * 1_024 * 1_024) { file, _ in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults.hold(.upload)
                    var upload = Resource<UploadReceipt>.upload(file)
                    upload.timeout = 1

                    await #expect(throws: ServiceError.timedOut) {
                        try await fixture.api.client.value(for: upload)
                    }
                    fixture.server.faults.release(.upload)
                }
            }
        }

        /// Over AsyncHTTPClient only: FoundationNetworking can trap the process when a server hangs
        /// up while it reads an upload's file (a `try!` on `curl_easy_pause` of a transfer that
        /// ended, seen once in a thread-sanitizer run), which would end this whole test run. The
        /// Platform Notes say so.
        @Test(arguments: [TransportKind.asyncHTTPClient])
        func aServerThatHangsUpMidUploadIsALostConnection(over transport: TransportKind) async throws {
            try await Self.withFile(bytes: 16 * 1_024 * 1_024) { file, _ in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults[.upload] = Fault(resetConnection: true)

                    await #expect {
                        try await fixture.api.client.value(for: .upload(file))
                    } throws: { error in
                        (error as? ServiceError)?.caseName == "connectionLost"
                    }
                }
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aFileCutShortWhileItIsSentFailsAsChangedRatherThanAsATimeout(over transport: TransportKind) async throws {
            try await Self.withFile(bytes: 16 * 1_024 * 1_024) { file, _ in
                try await Fixture.with(over: transport) { fixture in
                    _ = try await fixture.logIn()
                    fixture.server.faults.hold(.upload)
                    // A transport may wait for the bytes the file no longer has: its stall deadline
                    // ends it. Long enough not to pass while the server is held, before the cut,
                    // even on a machine busy with the other suites.
                    var resource = Resource<UploadReceipt>.upload(file)
                    resource.timeout = 30
                    let upload = Task { [resource] in try await fixture.api.client.value(for: resource) }
                    #expect(await fixture.server.arrivals.wait(for: 1, at: .upload))

                    let handle = try FileHandle(forWritingTo: file)
                    try handle.truncate(atOffset: 1_024 * 1_024)
                    try handle.close()
                    fixture.server.faults.release(.upload)

                    await #expect(throws: ServiceError.invalidRequest(reason: "the body file upload.bin changed after the request was made")) {
                        try await upload.value
                    }
                }
            }
        }

        private static func checksum(of data: Data) -> String {
            var checksum = Checksum()
            checksum.add(data)
            return checksum.hex
        }
    }
}

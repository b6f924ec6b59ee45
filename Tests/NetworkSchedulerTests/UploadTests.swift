import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Uploads through the scheduler, over the stub transport: a body read from a file, a
/// multipart form, their progress, and what a missing or endless file gets.
@Suite struct UploadTests {
    /// A file of `text` in a folder of its own, removed with the folder by `cleanUp`.
    private static func file(_ text: String, named name: String = "photo.jpg") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("UploadTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    private static func cleanUp(_ file: URL) {
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    private static func progress(_ sent: Int64, of expected: Int64) -> TransferProgress {
        TransferProgress(bytesSent: sent, bytesExpectedToSend: expected)
    }

    @Test func aFileBodyGoesToTheTransportAsAFileWithItsLength() async throws {
        let photo = try Self.file("JPEG bytes")
        defer { Self.cleanUp(photo) }
        let harness = Harness()
        let outcomes = Outcomes<User>()

        harness.api.send(Resource<User>(.put, path: "me/photo", body: .file(photo, contentType: "image/jpeg")),
                         completion: outcomes.completion("upload"))

        let arrival = try #require(await harness.transport.arrivals.wait(for: 1).first)
        #expect(arrival.bodyFile == TransportRequest.BodyFile(url: photo, length: 10))
        #expect(arrival.request.httpBody == nil, "not read into memory")
        #expect(arrival.body == Data("JPEG bytes".utf8))
        #expect(arrival.request.value(forHTTPHeaderField: "Content-Type") == "image/jpeg")
        #expect(await outcomes.wait(for: 1)["upload"]?.success?.name == "Ada")
    }

    @Test func progressReachesTheCallbackInOrderAndBeforeTheCompletion() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let steps = [Self.progress(100_000, of: 200_000), Self.progress(200_000, of: 200_000)]
        let harness = Harness { _ in .progress(steps, then: .json(userJSON)) }
        let told = EventLog<String>()

        harness.api.send(Resource<User>(.post, path: "uploads", body: .file(photo)),
                         progress: { told.append("sent \($0.bytesSent)") },
                         completion: { _ in told.append("done") })

        #expect(await told.wait(for: 3) == ["sent 100000", "sent 200000", "done"])
    }

    @Test func aStepQueuedBeforeTheOutcomeIsToldEvenOnceTheCallerIsBeingDelivered() async throws {
        // Given a callback queue that runs nothing until the upload has both reported its
        // progress and ended, so that the step and the outcome wait there together.
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let callbacks = DispatchQueue(label: "UploadTests.callbacks")
        callbacks.suspend()
        let harness = Harness(reply: { _ in .progress([Self.progress(10, of: 10)], then: .json(userJSON)) },
                              configure: { $0.callbackQueue = callbacks })
        let told = EventLog<String>()

        harness.api.send(Resource<User>(.post, path: "uploads", body: .file(photo)),
                         progress: { told.append("sent \($0.bytesSent)") },
                         completion: { _ in told.append("done") })
        await harness.transport.answered.wait(for: 1)
        callbacks.resume()

        #expect(await told.wait(for: 2) == ["sent 10", "done"])
    }

    @Test func everyCallerOfASharedUploadIsToldItsProgress() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .progress([Self.progress(10, of: 10)], then: .hold) }
        let upload = Resource<User>(.post, path: "uploads", body: .file(photo))
        let first = EventLog<TransferProgress>()
        let second = EventLog<TransferProgress>()
        let outcomes = Outcomes<User>()

        harness.api.send(upload, progress: { first.append($0) }, completion: outcomes.completion("first"))
        // The double tap joins once the step was told: it is told that step as it joins.
        #expect(await first.wait(for: 1) == [Self.progress(10, of: 10)])
        harness.api.send(upload, progress: { second.append($0) }, completion: outcomes.completion("double tap"))

        #expect(await second.wait(for: 1) == [Self.progress(10, of: 10)])
        harness.transport.release()
        #expect(await outcomes.wait(for: 2).count == 2)
        #expect(harness.transport.arrivals.count == 1, "one upload for both")
        #expect(first.count == 1 && second.count == 1, "each step once")
    }

    @Test func callersOfAnUploadThatJoinedBeforeItsFirstStepAreToldItOnce() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .hold }
        let upload = Resource<User>(.post, path: "uploads", body: .file(photo))
        let first = EventLog<TransferProgress>()
        let second = EventLog<TransferProgress>()
        let outcomes = Outcomes<User>()

        harness.api.send(upload, progress: { first.append($0) }, completion: outcomes.completion("first"))
        harness.api.send(upload, progress: { second.append($0) }, completion: outcomes.completion("double tap"))
        await harness.transport.arrivals.wait(for: 1)
        await harness.events.joined.wait(for: 1)
        harness.transport.release(with: .progress([Self.progress(10, of: 10)], then: .hold))

        #expect(await first.wait(for: 1) == [Self.progress(10, of: 10)])
        #expect(await second.wait(for: 1) == [Self.progress(10, of: 10)])
        harness.transport.release()
        #expect(await outcomes.wait(for: 2).count == 2)
        #expect(first.count == 1 && second.count == 1, "each step once")
    }

    @Test func aProgressSequenceMadeLateStartsWithTheLastStepAndEndsWithTheCaller() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .progress([Self.progress(100_000, of: 200_000), Self.progress(200_000, of: 200_000)], then: .hold) }
        let watched = EventLog<Void>()
        let handle = harness.api.send(Resource<User>(.post, path: "uploads", body: .file(photo)),
                                      progress: { _ in watched.append(()) }, completion: { _ in })
        await watched.wait(for: 2)

        let stream = handle.progress
        harness.transport.release()
        var seen: [TransferProgress] = []
        for await step in stream { seen.append(step) }

        #expect(seen == [Self.progress(200_000, of: 200_000)])
        #expect(handle.isFinished)
    }

    @Test func callersAreToldAboutAHundredStepsWhateverTheTransportReports() {
        var steps = ProgressSteps()
        let expected: Int64 = 100_000_000
        var passed: [Int64] = []
        for sent in stride(from: Int64(0), through: expected, by: 10_000) where steps.isStep(TransferProgress(bytesSent: sent, bytesExpectedToSend: expected)) {
            passed.append(sent)
        }
        #expect(passed.count == 100, "a step per 1,000,000 bytes, the last at 100,000,000")
        #expect(passed.first == 1_000_000)
        let isStepAgain = steps.isStep(TransferProgress(bytesSent: expected, bytesExpectedToSend: expected))
        #expect(!isStepAgain, "the last step once")

        var small = ProgressSteps()
        let isStep = small.isStep(TransferProgress(bytesSent: 20, bytesExpectedToSend: 20))
        #expect(isStep, "a small body is one step, when sent")
    }

    @Test func aProgressSequenceOfACallerThatEndedEndsAtOnce() async {
        let harness = Harness()
        let handle = harness.api.send(Resource<User>(path: "users/1")) { _ in }
        await harness.events.ended.wait(for: 1)
        var count = 0
        for await _ in handle.progress { count += 1 }
        #expect(count == 0)
    }

    @Test func aGetReportsNoProgress() async throws {
        // A request without a body is not given a progress closure: its transport has none to call.
        let harness = Harness { _ in .progress([Self.progress(1, of: 1)], then: .json(userJSON)) }
        let told = EventLog<TransferProgress>()
        _ = try await harness.api.value(for: Resource<User>(path: "users/1"), progress: { told.append($0) })
        #expect(told.elements.isEmpty)
    }

    @Test func aMissingFileFailsAsAnInvalidRequestWithoutTouchingTheNetwork() async {
        let harness = Harness()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-\(UUID().uuidString).bin")

        await #expect(throws: ServiceError.invalidRequest(reason: "the body file \(missing.lastPathComponent) cannot be read")) {
            try await harness.api.value(for: Resource<User>(.post, path: "uploads", body: .file(missing)))
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func aDeviceThatNeverEndsIsRefused() async {
        let harness = Harness()
        await #expect(throws: ServiceError.invalidRequest(reason: "the body file zero is not a regular file")) {
            try await harness.api.value(for: Resource<User>(.post, path: "uploads", body: .file(URL(fileURLWithPath: "/dev/zero"))))
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func aFileThatDisappearsBeforeItsAttemptFailsItAsAnInvalidRequest() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness(budget: 1) { request in request.url?.path == "/v1/first" ? .hold : .json(userJSON) }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "first"), completion: outcomes.completion("first"))
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(.post, path: "uploads", body: .file(photo)), completion: outcomes.completion("upload"))

        try FileManager.default.removeItem(at: photo)
        harness.transport.release()

        let results = await outcomes.wait(for: 2)
        #expect(results["upload"]?.failure == .invalidRequest(reason: "the body file photo.jpg cannot be read"))
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func anAttemptThatFailsAfterItsFileWasCutShortFailsAsChanged() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(.post, path: "uploads", body: .file(photo)), completion: outcomes.completion("upload"))
        await harness.transport.arrivals.wait(for: 1)

        try Data("01234".utf8).write(to: photo)
        harness.transport.release(with: .fail(URLError(.networkConnectionLost)))

        #expect(await outcomes.wait(for: 1)["upload"]?.failure
            == .invalidRequest(reason: "the body file photo.jpg changed after the request was made"))
    }

    @Test func anAttemptThatStallsAfterItsFileWasCutShortFailsAsChangedAtItsDeadline() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let clock = VirtualClock()
        let harness = Harness(reply: { _ in .never }, configure: { $0.clock = clock })
        let outcomes = Outcomes<User>()
        var upload = Resource<User>(.post, path: "uploads", body: .file(photo))
        upload.timeout = 5
        harness.api.send(upload, completion: outcomes.completion("upload"))
        await harness.transport.arrivals.wait(for: 1)

        try Data("01234".utf8).write(to: photo)
        clock.advance(by: 5)

        #expect(await outcomes.wait(for: 1)["upload"]?.failure
            == .invalidRequest(reason: "the body file photo.jpg changed after the request was made"))
    }

    @Test func aFileChangedBetweenTwoSendsIsTwoUploads() async throws {
        let photo = try Self.file("first version")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .hold }
        let upload = Resource<User>(.post, path: "uploads", body: .file(photo))
        harness.api.send(upload) { _ in }
        await harness.transport.arrivals.wait(for: 1)

        try Data("the second, longer version".utf8).write(to: photo)
        harness.api.send(upload) { _ in }

        #expect(await harness.transport.arrivals.wait(for: 2).count == 2)
        harness.transport.release()
        harness.transport.release()
    }

    @Test func aKeyedUploadCarriesAnIdempotencyKey() async throws {
        let photo = try Self.file("0123456789")
        defer { Self.cleanUp(photo) }
        let harness = Harness(sendsIdempotencyKeys: true)
        _ = try await harness.api.value(for: Resource<User>(.post, path: "uploads", body: .file(photo)))
        let arrival = try #require(harness.transport.arrivals.elements.first)
        #expect(arrival.request.value(forHTTPHeaderField: "Idempotency-Key") != nil)
    }

    // MARK: - Multipart forms

    @Test func aFormWithAFileIsStreamedFromATemporaryFileRemovedWhenTheAttemptEnds() async throws {
        let photo = try Self.file("JPEG", named: "me.jpg")
        defer { Self.cleanUp(photo) }
        let harness = Harness { _ in .hold }
        var form = MultipartForm(boundary: "XyZ")
        form.append("Ada", named: "name")
        form.append(fileAt: photo, named: "avatar", contentType: "image/jpeg")
        let outcomes = Outcomes<User>()

        harness.api.send(Resource<User>(.post, path: "me/avatar", body: .multipart(form)), completion: outcomes.completion("avatar"))
        let arrival = try #require(await harness.transport.arrivals.wait(for: 1).first)
        let staged = try #require(arrival.bodyFile)

        let expected = "--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nAda\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"me.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nJPEG\r\n"
            + "--XyZ--\r\n"
        #expect(arrival.body == Data(expected.utf8))
        #expect(staged.length == Int64(expected.utf8.count))
        #expect(arrival.request.value(forHTTPHeaderField: "Content-Type") == "multipart/form-data; boundary=XyZ")
        #expect(FileManager.default.fileExists(atPath: staged.url.path))

        harness.transport.release()
        await outcomes.wait(for: 1)
        #expect(!FileManager.default.fileExists(atPath: staged.url.path), "the attempt's temporary file is removed")
    }

    @Test func aFormWithoutFilesIsSentFromMemory() async throws {
        let harness = Harness()
        var form = MultipartForm(boundary: "b")
        form.append(Data([0, 1, 2]), named: "blob", filename: "blob.bin", contentType: "application/octet-stream")
        _ = try await harness.api.value(for: Resource<User>(.post, path: "blobs", body: .multipart(form)))

        let arrival = try #require(harness.transport.arrivals.elements.first)
        #expect(arrival.bodyFile == nil)
        var expected = Data("--b\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"blob.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
        expected.append(contentsOf: [0, 1, 2])
        expected.append(Data("\r\n--b--\r\n".utf8))
        #expect(arrival.request.httpBody == expected)
    }

    @Test func namesThatCouldAddAHeaderOrAPartAreEscapedAsBrowsersDo() async throws {
        let harness = Harness()
        var form = MultipartForm(boundary: "b")
        form.append(Data(), named: "a\"\r\nX-Injected: 1", filename: "evil\".txt\r\n--b")
        _ = try await harness.api.value(for: Resource<User>(.post, path: "blobs", body: .multipart(form)))

        let body = String(decoding: try #require(harness.transport.arrivals.elements.first?.body), as: UTF8.self)
        #expect(body == "--b\r\nContent-Disposition: form-data; name=\"a%22%0D%0AX-Injected: 1\"; filename=\"evil%22.txt%0D%0A--b\"\r\n\r\n\r\n--b--\r\n")
    }

    @Test func aContentTypeWithALineBreakFailsTheRequestUnsent() async {
        let harness = Harness()
        var form = MultipartForm(boundary: "b")
        form.append(Data(), named: "file", contentType: "text/plain\r\nX-Injected: 1")
        await #expect(throws: ServiceError.invalidRequest(reason: "the content type of the multipart part \"file\" has a control character")) {
            try await harness.api.value(for: Resource<User>(.post, path: "blobs", body: .multipart(form)))
        }
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func aBoundaryRFC2046DoesNotAllowFailsTheRequestUnsent() async {
        let harness = Harness()
        let form = MultipartForm(boundary: "line\r\nbreak")
        await #expect(throws: ServiceError.invalidRequest(reason: "the multipart boundary \"line\\r\\nbreak\" is not one RFC 2046 allows")) {
            try await harness.api.value(for: Resource<User>(.post, path: "blobs", body: .multipart(form)))
        }
        #expect(harness.transport.arrivals.count == 0)
    }
}

import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

/// The machine, driven synchronously (see `MachineDriver`): a 401 refreshes the token once and
/// replays the call; a failed refresh fails its callers.
@Suite struct MachineTokenRefreshTests {
    @Test func a401RefreshesTheTokenOnceThenReplaysTheCall() {
        var driver = MachineDriver()
        let authenticator = TokenAuthenticator(token: "old") { _ in "new" }
        let (request, _) = MachineDriver.request("GET", "https://api.test/users/1", shared: true, timeout: 60)
        let submission = MachineDriver.submission(request, authenticator: authenticator)
        driver.send("a", submission: submission)
        driver.send("b", submission: submission)

        driver.end("task 1", status: 401)
        #expect(driver.refreshes.count == 1)
        #expect(driver.outcomes.isEmpty)

        driver.tokenRefreshed(driver.refreshes[0])
        #expect(driver.started == ["task 1", "task 2"])
        driver.end("task 2", status: 401)
        #expect(driver.refreshes.isEmpty, "a call is replayed with a new token once")
        #expect(driver.outcomes.count == 2 && driver.outcomes.allSatisfy { (try? $0.result.get()) == 401 })
        #expect(driver.violations.isEmpty)
    }

    @Test func aFailedRefreshFailsTheCallsCallers() {
        var driver = MachineDriver()
        let authenticator = TokenAuthenticator(token: "old") { _ in "new" }
        let (request, _) = MachineDriver.request("GET", "https://api.test/users/1", shared: true, timeout: 60)
        driver.send("a", submission: MachineDriver.submission(request, authenticator: authenticator))
        driver.end("task 1", status: 401)

        driver.tokenRefreshed(driver.refreshes[0], failing: .authenticationFailed(cause: .timedOut))

        #expect(driver.outcome(of: "a").map { if case .failure(.authenticationFailed) = $0 { true } else { false } } == true)
        #expect(driver.machine.census == (0, 0, 0))
    }
}

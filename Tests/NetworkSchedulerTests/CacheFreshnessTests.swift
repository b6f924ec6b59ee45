import Foundation
import Testing
@testable import NetworkScheduler

/// RFC 9111's freshness and age for a private cache, on cases ported from the HTTP Caching
/// Tests suite's freshness section (http-tests/cache-tests); the whole ported suite runs in the
/// Sample, through the scheduler, over a stub and over real sockets (`CacheSuiteTests`).
@Suite struct CacheFreshnessTests {
    private static let date = "Thu, 26 Nov 2026 00:00:00 GMT"

    private static func lifetime(_ fields: HeaderFields, status: Int = 200) -> TimeInterval {
        var fields = fields
        fields["date"] = date
        return CacheFreshness(status: status, fields: fields).lifetime
    }

    @Test func maxAgeSetsTheLifetimeAndWinsOverExpires() {
        #expect(Self.lifetime(["cache-control": "max-age=3600"]) == 3_600)
        #expect(Self.lifetime(["cache-control": "max-age=0"]) == 0)
        #expect(Self.lifetime(["cache-control": "max-age=3600", "expires": "Thu, 26 Nov 2026 00:00:10 GMT"]) == 3_600)
        #expect(Self.lifetime(["cache-control": "MAX-AGE=60, max-age=3600"]) == 60, "the first of a repeated directive")
    }

    @Test func aPrivateCacheIgnoresSMaxage() {
        #expect(Self.lifetime(["cache-control": "s-maxage=3600"]) == 0)
    }

    @Test func aMaxAgePastTwoToTheThirtyFirstIsTwoToTheThirtyFirst() {
        #expect(Self.lifetime(["cache-control": "max-age=99999999999999999999"]) == 2_147_483_648)
    }

    @Test func aMaxAgeThatIsNoNumberGivesNoLifetime() {
        #expect(Self.lifetime(["cache-control": "max-age=-1"]) == 0)
        #expect(Self.lifetime(["cache-control": "max-age=1.5"]) == 0)
    }

    @Test func expiresCountsFromDateAndAnInvalidOneIsThePast() {
        #expect(Self.lifetime(["expires": "Thu, 26 Nov 2026 01:00:00 GMT"]) == 3_600)
        #expect(Self.lifetime(["expires": "Wed, 25 Nov 2026 23:00:00 GMT"]) == 0)
        #expect(Self.lifetime(["expires": "0"]) == 0)
    }

    @Test func theObsoleteDateFormsAreRead() {
        #expect(Self.lifetime(["expires": "Thursday, 26-Nov-26 01:00:00 GMT"]) == 3_600)
        #expect(Self.lifetime(["expires": "Thu Nov 26 01:00:00 2026"]) == 3_600)
    }

    @Test func withoutAnExplicitLifetimeATenthOfTheTimeSinceItChangedAtMostADay() {
        let freshness = CacheFreshness(status: 200, fields: ["date": Self.date, "last-modified": "Wed, 25 Nov 2026 22:20:00 GMT"])
        #expect(freshness == CacheFreshness(status: 200, fields: ["date": Self.date, "last-modified": "Wed, 25 Nov 2026 22:20:00 GMT"]))
        #expect(freshness.lifetime == 600 && freshness.isHeuristic)
        #expect(Self.lifetime(["last-modified": "Thu, 01 Jan 2026 00:00:00 GMT"]) == 86_400)
        #expect(Self.lifetime(["last-modified": "Wed, 25 Nov 2026 22:20:00 GMT"], status: 500) == 0, "not heuristically cacheable")
    }

    @Test func theAgeIsTheLargerOfWhatAgeAndDateSayPlusTheTimeSinceItCame() {
        let date = HTTPDate.parse(Self.date)!
        let requested = date.addingTimeInterval(10)
        let received = requested.addingTimeInterval(2)

        // Age says 100: corrected to 102 with the exchange's 2 s; Date says 12. Then 30 s pass.
        let age = CacheFreshness.age(fields: ["age": "100", "date": Self.date], requested: requested, received: received,
                                     now: received.addingTimeInterval(30))

        #expect(age == 132)
        #expect(CacheFreshness.age(fields: ["date": Self.date], requested: requested, received: received, now: received) == 12)
    }

    @Test func directivesAreReadWhateverTheirSpacingCaseAndQuotes() {
        let control = CacheControl(#" No-Cache="set-cookie, x-private" ,private,  max-age=60 , must-revalidate"#)
        #expect(control.directives["no-cache"] == .some("set-cookie, x-private"))
        #expect(control.has("private") && control.has("must-revalidate"))
        #expect(control.seconds("max-age") == 60)
        // No space around `=`: the suite's freshness-max-age-space-before/after-equals.
        #expect(!CacheControl("max-age =60").has("max-age"))
        #expect(!CacheControl("max-age= 60").has("max-age"))
        #expect(!CacheControl(nil).has("no-store"))
    }
}

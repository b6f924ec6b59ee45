#!/usr/bin/env bash
# Checks the README's Install section as a newcomer reads it: clones this repository (what is
# committed, as a user gets it), writes a throwaway package whose Package.swift is the README's
# Install block as it stands, with the repository's URL and a commit filled in, and whose
# program is the README's quick example, then builds it and its tests (which use
# NetworkSchedulerTesting).
# Then the same with the block's path dependency instead of the URL, and with the block's
# integration lines too (the Integrations package, by path), whose product a file of the
# program uses. Checks that a package that uses only the library fetched nothing else. Last,
# runs the Tracing article's swift-otel setup in a package of its own. Needs no network.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone --quiet "$root" "$work/NetworkScheduler"
commit=$(git -C "$work/NetworkScheduler" rev-parse HEAD)

# The first ```swift block after a heading of the README.
block_after() {
    awk -v heading="$1" '
        $0 == heading { found = 1; next }
        found && /^```swift$/ { inside = 1; next }
        inside && /^```$/ { exit }
        inside { print }
    ' README.md
}

install=$(block_after "## Install")
example=$(block_after "## Quick example")
if [ -z "$install" ] || [ -z "$example" ]; then
    echo "check-install: the README has no Install or Quick example block" >&2
    exit 1
fi

# One throwaway package: $1 its folder, $2 its manifest, the block as written with the URL and
# the commit filled in, or with the path line instead.
make_package() {
    local folder="$work/$1"
    mkdir -p "$folder/Sources/Friends" "$folder/Tests/FriendsTests"
    echo "$2" >"$folder/Package.swift"
    echo "$example" >"$folder/Sources/Friends/main.swift"
    cat >"$folder/Tests/FriendsTests/FriendsTests.swift" <<'SWIFT'
import Foundation
import NetworkScheduler
import NetworkSchedulerTesting
import Testing

@Test func aStubAnswersTheFriends() async throws {
    let transport = StubTransport { _ in .json(#"[{"id": 2, "name": "Grace"}]"#) }
    let scheduler = RequestScheduler { $0.transport = transport }
    let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, scheduler: scheduler)
    struct Friend: Decodable, Sendable { let name: String }
    #expect(try await api.value(for: Resource<[Friend]>(path: "users/42/friends")).map(\.name) == ["Grace"])
}
SWIFT
    echo "check-install: building $1"
    (cd "$folder" && swift build --build-tests >"$work/$1.log" 2>&1) || {
        cat "$work/$1.log" >&2
        echo "check-install: $1 did not build; its manifest:" >&2
        cat "$folder/Package.swift" >&2
        exit 1
    }
}

by_url=$(echo "$install" | sed \
    -e "s|<the repository's URL>|file://$work/NetworkScheduler|" \
    -e "s|<a commit of main>|$commit|")
make_package by-url "$by_url"
# The library depends on no package: an app that uses only it fetches nothing else.
fetched=$(ls "$work/by-url/.build/checkouts")
echo "check-install: by URL, SwiftPM fetched: $fetched"
if [ "$fetched" != "NetworkScheduler" ]; then
    echo "check-install: an app that uses only the library fetched more than it" >&2
    exit 1
fi

# The commented path line instead of the URL line, with the clone beside the package.
by_path=$(echo "$install" | sed \
    -e '/\.package(url:/d' \
    -e 's|^\( *\)// or: \(\.package(path: .*)\)$|\1\2,|')
make_package by-path "$by_path"

# The integration lines of the block too, and a file that uses the integration's product.
with_integration=$(echo "$by_path" | sed \
    -e 's|^\( *\)// For an integration: \(\.package(path: .*)\),$|\1\2,|' \
    -e 's|^\( *\)// \(\.product(name: "NetworkSchedulerOpenAPI", package: "Integrations"),\)$|\1\2|')
if ! echo "$with_integration" | grep -q '^ *\.package(path: "../NetworkScheduler/Integrations"),$' ||
   ! echo "$with_integration" | grep -q '^ *\.product(name: "NetworkSchedulerOpenAPI", package: "Integrations"),$'; then
    echo "check-install: the Install block has no integration lines to uncomment" >&2
    exit 1
fi
mkdir -p "$work/with-integration/Sources/Friends"
cat >"$work/with-integration/Sources/Friends/OpenAPITransport.swift" <<'SWIFT'
import NetworkScheduler
import NetworkSchedulerOpenAPI

/// A generated OpenAPI client's transport over the program's client: the integration links.
func openAPITransport(over api: APIClient) -> SchedulerClientTransport {
    SchedulerClientTransport(client: api)
}
SWIFT
make_package with-integration "$with_integration"

# The Tracing article's swift-otel setup (scripts/TracingWithOTelTests.swift), run in a package
# of its own: swift-otel does not build under the thread sanitizer, which the Sample's tests
# run under.
otel="$work/tracing-with-otel"
mkdir -p "$otel/Tests/TracingWithOTelTests"
cp scripts/TracingWithOTelTests.swift "$otel/Tests/TracingWithOTelTests/"
cat >"$otel/Package.swift" <<'MANIFEST'
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "TracingWithOTel",
    dependencies: [
        .package(path: "../NetworkScheduler"),
        .package(path: "../NetworkScheduler/Integrations"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .testTarget(name: "TracingWithOTelTests", dependencies: [
            .product(name: "NetworkScheduler", package: "NetworkScheduler"),
            .product(name: "NetworkSchedulerTesting", package: "NetworkScheduler"),
            .product(name: "NetworkSchedulerTracing", package: "Integrations"),
            .product(name: "Tracing", package: "swift-distributed-tracing"),
            .product(name: "OTel", package: "swift-otel"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
MANIFEST
echo "check-install: running the Tracing article's swift-otel setup"
(cd "$otel" && swift test >"$work/tracing-with-otel.log" 2>&1) || {
    cat "$work/tracing-with-otel.log" >&2
    echo "check-install: the Tracing article's swift-otel setup failed" >&2
    exit 1
}

echo "check-install: the README's Install section builds as written (commit $commit: by URL, by path, with an integration), and Tracing's swift-otel setup runs"

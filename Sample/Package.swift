// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between clones.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "Sample",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "friends-demo", targets: ["FriendsDemo"]),
        .executable(name: "social-server", targets: ["SocialServerCommand"]),
        .library(name: "SocialServer", targets: ["SocialServer"]),
        .library(name: "Gateway", targets: ["Gateway"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(path: "../Integrations"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The HTTP/2 server of the budget's tests: TLS with a certificate made at run time.
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        // The integrations' own tests (IntegrationsTests) live here, where their dependencies
        // are built anyway: a package of their own built AsyncHTTPClient twice more per CI run.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "SocialServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its servers' protocol: HTTP/1.1, or HTTP/2 over TLS in the budget's tests.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "Gateway",
            dependencies: [
                "SocialServer", "SocialApp",
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerAsyncHTTPClient", package: "Integrations"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .target(
            name: "SocialApp",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerOutbox", package: library),
            ]
        ),
        // The social API's client, made by swift-openapi-generator from `openapi.yaml` and
        // committed (scripts/generate-openapi.sh makes it again): its build plugin would build
        // the generator on every clean build.
        .target(
            name: "SocialOpenAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]
        ),
        .executableTarget(
            name: "FriendsDemo",
            dependencies: [
                "SocialServer", "SocialApp", "Gateway",
                // Step 16 starts it as the app it kills; a dependency so that it is built beside.
                "OutboxChild",
                // Its StubConnectivity plays the device going offline.
                .product(name: "NetworkSchedulerTesting", package: library),
                // Its picture of the schedule (--schedule-directory).
                .product(name: "NetworkSchedulerTimeline", package: library),
                // The gateway step's clients.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "OutboxChild",
            dependencies: [
                "SocialApp",
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerOutbox", package: library),
            ]
        ),
        .executableTarget(
            name: "SocialServerCommand",
            dependencies: [
                "SocialServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SampleTests",
            dependencies: [
                "SocialServer", "SocialApp", "Gateway", "SocialOpenAPI",
                // Its binary is the client process the outbox's crash test kills.
                "OutboxChild",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerTesting", package: library),
                .product(name: "NetworkSchedulerOutbox", package: library),
                .product(name: "NetworkSchedulerAsyncHTTPClient", package: "Integrations"),
                .product(name: "NetworkSchedulerOpenAPI", package: "Integrations"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The thread sanitizer's suppressions for the test binary (one false report of
        // SwiftNIO's; see its suppressions.c), in C so that it runs before the sanitizer can.
        .target(name: "ThreadSanitizerSuppressions", path: "Tests/ThreadSanitizerSuppressions"),
        // The tests of `Integrations/`' products: the AsyncHTTPClient transport against a NIO
        // server on loopback, the monitors, the OpenAPI transport's conversions, the tracing.
        .testTarget(
            name: "IntegrationsTests",
            dependencies: [
                "ThreadSanitizerSuppressions",
                .product(name: "NetworkSchedulerAsyncHTTPClient", package: "Integrations"),
                .product(name: "NetworkSchedulerLogging", package: "Integrations"),
                .product(name: "NetworkSchedulerMetrics", package: "Integrations"),
                .product(name: "NetworkSchedulerOpenAPI", package: "Integrations"),
                .product(name: "NetworkSchedulerTracing", package: "Integrations"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerTesting", package: library),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

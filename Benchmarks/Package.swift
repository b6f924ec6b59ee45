// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between clones.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(path: "../Sample"),
        .package(path: "../Integrations"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        // Its counters, read around each client's turn for allocations per request.
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        .executableTarget(
            name: "SchedulerBenchmarks",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerOutbox", package: library),
                .product(name: "SocialServer", package: "Sample"),
                .product(name: "NetworkSchedulerAsyncHTTPClient", package: "Integrations"),
                .product(name: "NetworkSchedulerOpenAPI", package: "Integrations"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Scenario 14's baselines: the OpenAPI runtime's own transports.
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ],
            path: "Benchmarks/SchedulerBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The probes live outside `Benchmarks/`, where the benchmark plugin would run each
        // as a benchmark (and report it crashed, for want of its arguments).
        // One burst of GETs per fresh process, for `scripts/latency-bursts.sh`.
        .executableTarget(
            name: "BurstProbe",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerAsyncHTTPClient", package: "Integrations"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Probes/BurstProbe"
        ),
        // One download per fresh process, for `scripts/download-pairs.sh`: the library alone.
        .executableTarget(
            name: "DownloadProbe",
            dependencies: [.product(name: "NetworkScheduler", package: library)],
            path: "Probes/DownloadProbe"
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between clones.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

/// Transports and bridges that depend on other packages, so that the library itself depends
/// on none: AsyncHTTPClient as a transport, swift-log and swift-metrics as event monitors, a
/// `ClientTransport` for clients swift-openapi-generator made, and spans for
/// swift-distributed-tracing.
/// Its platforms are the library's: none of its dependencies asks for newer. Its tests are the
/// Sample's `IntegrationsTests` (`swift test --package-path Sample --filter IntegrationsTests`).
let package = Package(
    name: "NetworkSchedulerIntegrations",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkSchedulerAsyncHTTPClient", targets: ["NetworkSchedulerAsyncHTTPClient"]),
        .library(name: "NetworkSchedulerLogging", targets: ["NetworkSchedulerLogging"]),
        .library(name: "NetworkSchedulerMetrics", targets: ["NetworkSchedulerMetrics"]),
        .library(name: "NetworkSchedulerOpenAPI", targets: ["NetworkSchedulerOpenAPI"]),
        .library(name: "NetworkSchedulerTracing", targets: ["NetworkSchedulerTracing"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "NetworkSchedulerAsyncHTTPClient",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "NetworkSchedulerLogging",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "NetworkSchedulerMetrics",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .target(
            name: "NetworkSchedulerOpenAPI",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "NetworkSchedulerTracing",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between clones.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

/// Transports and integrations that depend on other packages, so that the library itself
/// depends on none. Tested by the Sample's suites, against its server.
let package = Package(
    name: "Integrations",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "NetworkSchedulerAsyncHTTPClient", targets: ["NetworkSchedulerAsyncHTTPClient"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    ],
    targets: [
        .target(
            name: "NetworkSchedulerAsyncHTTPClient",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

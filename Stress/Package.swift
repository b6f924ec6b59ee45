// swift-tools-version: 6.0
import Foundation
import PackageDescription

// A path dependency is named after its folder, which differs between clones.
let library = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

// The chaos soak of the whole library: `swift run -c release --package-path Stress Stress`
// for a long run, `swift test --package-path Stress` for CI's 10,000 callers.
let package = Package(
    name: "Stress",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .target(
            name: "ChaosSoak",
            dependencies: [
                .product(name: "NetworkScheduler", package: library),
                .product(name: "NetworkSchedulerTimeline", package: library),
                .product(name: "NetworkSchedulerOutbox", package: library),
                .product(name: "NetworkSchedulerTesting", package: library),
            ]
        ),
        .executableTarget(
            name: "Stress",
            dependencies: ["ChaosSoak"]
        ),
        .testTarget(
            name: "ChaosSoakTests",
            dependencies: ["ChaosSoak"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

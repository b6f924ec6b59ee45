// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "NetworkScheduler",
    platforms: [.iOS(.v15), .macOS(.v12), .tvOS(.v15), .watchOS(.v8)],
    products: [
        .library(name: "NetworkScheduler", targets: ["NetworkScheduler"]),
        .library(name: "NetworkSchedulerTesting", targets: ["NetworkSchedulerTesting"]),
        .library(name: "NetworkSchedulerTimeline", targets: ["NetworkSchedulerTimeline"]),
        .library(name: "NetworkSchedulerOutbox", targets: ["NetworkSchedulerOutbox"]),
    ],
    targets: [
        .target(name: "NetworkScheduler"),
        .target(name: "NetworkSchedulerTesting", dependencies: ["NetworkScheduler"]),
        .target(name: "NetworkSchedulerTimeline", dependencies: ["NetworkScheduler"]),
        .target(name: "NetworkSchedulerOutbox", dependencies: ["NetworkScheduler"]),
        .testTarget(
            name: "NetworkSchedulerTests",
            dependencies: [
                "NetworkScheduler", "NetworkSchedulerTesting", "NetworkSchedulerTimeline", "NetworkSchedulerOutbox",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

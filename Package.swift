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
        // The scheduler's decisions, kept apart: a module that imports nothing, so that what
        // decides cannot read HTTP. Its code is inlinable, so that the scheduler's module
        // specializes it for its own types (Benchmarks/RUNS.md, thirty-eighth run).
        .target(name: "NetworkSchedulerMachine"),
        .target(name: "NetworkScheduler", dependencies: ["NetworkSchedulerMachine"]),
        .target(name: "NetworkSchedulerTesting", dependencies: ["NetworkScheduler"]),
        .target(name: "NetworkSchedulerTimeline", dependencies: ["NetworkScheduler"]),
        .target(name: "NetworkSchedulerOutbox", dependencies: ["NetworkScheduler"]),
        .testTarget(
            name: "NetworkSchedulerTests",
            dependencies: [
                "NetworkScheduler", "NetworkSchedulerMachine", "NetworkSchedulerTesting", "NetworkSchedulerTimeline", "NetworkSchedulerOutbox",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version:6.0
import PackageDescription

/// StoreRelay's benchmarks: a separate package, run on demand (`Benchmarks/run.sh`), never in CI.
///
/// The gateway is measured as the real release binary (`../.build/release/storerelay serve`),
/// driven over loopback by the load generator and sinks in `BenchKit`. The main package exposes
/// no library product, so the few modules the harness needs in-process (the simulator's
/// notification factory to sign unique realistic bodies, and the verifier to time
/// verification alone) are compiled here from the main package's own sources through the
/// symlinks in `Sources/Linked`; nothing is copied, and the main package is not edited.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreRelayBenchmarks",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "storerelay-bench", targets: ["storerelay-bench"]),
    ],
    targets: [
        // MARK: The main package's modules, by symlink (see above), with its own dependencies.
        .systemLibrary(name: "COpenSSL", path: "Sources/Linked/COpenSSL", pkgConfig: "openssl"),
        .systemLibrary(name: "CZlib", path: "Sources/Linked/CZlib", pkgConfig: "zlib"),
        .target(name: "CStoreRelayShims", dependencies: ["COpenSSL", "CZlib"], path: "Sources/Linked/CStoreRelayShims"),
        .target(name: "StoreRelayJSON", path: "Sources/Linked/StoreRelayJSON", swiftSettings: swiftSettings),
        .target(
            name: "StoreRelaySupport",
            dependencies: ["StoreRelayJSON", "CStoreRelayShims"],
            path: "Sources/Linked/StoreRelaySupport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayCrypto",
            dependencies: ["COpenSSL", "CStoreRelayShims", "StoreRelaySupport"],
            path: "Sources/Linked/StoreRelayCrypto",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayAppStore",
            dependencies: ["StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport"],
            path: "Sources/Linked/StoreRelayAppStore",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayEvents",
            dependencies: ["StoreRelayAppStore", "StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport"],
            path: "Sources/Linked/StoreRelayEvents",
            swiftSettings: swiftSettings
        ),
        // The journal record alone (StoreRelayDelivery would bring the HTTP client, queues and
        // journal): its one file, so normalize + encode is timed as the gateway runs it.
        .target(
            name: "StoreRelayRecord",
            dependencies: ["StoreRelayEvents", "StoreRelayJSON", "StoreRelaySupport"],
            path: "Sources/LinkedRecord",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelaySimulator",
            dependencies: ["StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport", "COpenSSL", "CStoreRelayShims"],
            path: "Sources/Linked/StoreRelaySimulator",
            swiftSettings: swiftSettings
        ),

        // MARK: The harness: epoll load generator, sinks, process control, statistics.
        .systemLibrary(name: "CBenchSys"),
        .target(name: "BenchKit", dependencies: ["CBenchSys"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "storerelay-bench",
            dependencies: [
                "BenchKit", "StoreRelayAppStore", "StoreRelayEvents", "StoreRelayRecord", "StoreRelayJSON",
                "StoreRelaySimulator", "StoreRelayCrypto", "StoreRelaySupport",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// swift-tools-version:6.0
import PackageDescription

/// StoreRelay's benchmarks: a separate package, run on demand (`Benchmarks/run.sh`), never in CI.
///
/// The gateway is measured as the real release binary (`../.build/release/storerelay serve`),
/// driven over loopback by the load generator and sinks in `BenchKit`. The few layers the
/// harness needs in-process (the simulator's notification factory to sign unique realistic
/// bodies, the verifier and the journal record to time verification alone) come from the
/// main package's library products.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreRelayBenchmarks",
    products: [
        .executable(name: "storerelay-bench", targets: ["storerelay-bench"]),
    ],
    dependencies: [
        .package(name: "StoreRelay", path: ".."),
    ],
    targets: [
        .systemLibrary(name: "CBenchOpenSSL", pkgConfig: "openssl"),

        // MARK: The harness: epoll load generator, sinks, process control, statistics.
        .systemLibrary(name: "CBenchSys"),
        .target(name: "BenchKit", dependencies: ["CBenchSys"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "storerelay-bench",
            dependencies: [
                "BenchKit", "CBenchOpenSSL", "CBenchSys",
                .product(name: "StoreRelayCore", package: "StoreRelay"),
                .product(name: "StoreRelayNet", package: "StoreRelay"),
                .product(name: "StoreRelayCrypto", package: "StoreRelay"),
                .product(name: "StoreRelayVerification", package: "StoreRelay"),
                .product(name: "StoreRelayStorage", package: "StoreRelay"),
                .product(name: "StoreRelayDelivery", package: "StoreRelay"),
                .product(name: "StoreRelaySimulator", package: "StoreRelay"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// swift-tools-version:6.0
import PackageDescription

/// libFuzzer targets for StoreRelay's parsers of untrusted input. Not part of the main
/// package: they need `-sanitize=fuzzer`, which only `run.sh` passes (see README.md).
let package = Package(
    name: "StoreRelayFuzz",
    dependencies: [
        .package(name: "StoreRelay", path: ".."),
    ],
    targets: [
        // Invariant checks that abort (so libFuzzer keeps the input) and input shaping.
        .target(name: "FuzzSupport"),
        .executableTarget(
            name: "FuzzHTTPParser",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzHTTPResponse",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzRESPReply",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzNATSProtocol",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzAMQPFrames",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzSQSAnswer",
            dependencies: [
                "FuzzSupport", .product(name: "StoreRelayAWS", package: "StoreRelay"),
                .product(name: "StoreRelayNet", package: "StoreRelay"),
            ]
        ),
        .executableTarget(
            name: "FuzzRedisTopology",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayNet", package: "StoreRelay")]
        ),
        .executableTarget(
            name: "FuzzNotification",
            dependencies: [
                "FuzzSupport",
                .product(name: "StoreRelayCore", package: "StoreRelay"),
                .product(name: "StoreRelayVerification", package: "StoreRelay"),
            ]
        ),
        // OpenSSL for FuzzES256Verdict's reference verdict.
        .systemLibrary(name: "CFuzzOpenSSL", pkgConfig: "openssl"),
        .executableTarget(
            name: "FuzzES256Verdict",
            dependencies: [
                "FuzzSupport", "CFuzzOpenSSL",
                .product(name: "StoreRelayCrypto", package: "StoreRelay"),
            ]
        ),
        .executableTarget(
            name: "FuzzPlayPush",
            dependencies: [
                "FuzzSupport",
                .product(name: "StoreRelayGooglePlay", package: "StoreRelay"),
                .product(name: "StoreRelayVerification", package: "StoreRelay"),
                .product(name: "StoreRelayCrypto", package: "StoreRelay"),
                .product(name: "StoreRelayCore", package: "StoreRelay"),
            ]
        ),
        .executableTarget(
            name: "FuzzRoutesConf",
            dependencies: ["FuzzSupport", .product(name: "StoreRelayConfig", package: "StoreRelay")]
        ),
    ]
)

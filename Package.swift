// swift-tools-version:6.0
import PackageDescription

/// Every Swift target is built in the Swift 6 language mode with `any` spelled out.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreRelay",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "storerelay", targets: ["storerelay"]),
        // Libraries for the on-demand packages beside this one (Fuzz/, Benchmarks/).
        .library(name: "StoreRelayJSON", targets: ["StoreRelayJSON"]),
        .library(name: "StoreRelayHTTP", targets: ["StoreRelayHTTP"]),
        .library(name: "StoreRelayAppStore", targets: ["StoreRelayAppStore"]),
        .library(name: "StoreRelayEvents", targets: ["StoreRelayEvents"]),
        .library(name: "StoreRelayConfig", targets: ["StoreRelayConfig"]),
        .library(name: "StoreRelayCrypto", targets: ["StoreRelayCrypto"]),
    ],
    targets: [
        // MARK: C libraries (system) and the one C shim target
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(name: "CStoreRelayShims", dependencies: ["COpenSSL", "CZlib"]),

        // MARK: One module per concern
        .target(name: "StoreRelayJSON", swiftSettings: swiftSettings),
        .target(
            name: "StoreRelaySupport",
            dependencies: ["StoreRelayJSON", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayNet",
            dependencies: ["StoreRelayTLS", "StoreRelaySupport", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayHTTP",
            dependencies: ["StoreRelayNet", "StoreRelaySupport", "StoreRelayTLS"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayCrypto",
            dependencies: ["COpenSSL", "CStoreRelayShims", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayAppStore",
            dependencies: ["StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayEvents",
            dependencies: ["StoreRelayAppStore", "StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayConfig",
            dependencies: ["StoreRelayNet", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayJournal",
            dependencies: ["StoreRelaySupport", "StoreRelayJSON", "StoreRelayCrypto", "CStoreRelayShims", "CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayTLS",
            dependencies: ["COpenSSL", "CStoreRelayShims", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayHTTPClient",
            dependencies: ["StoreRelayNet", "StoreRelayTLS", "StoreRelayHTTP", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayFileQueue",
            dependencies: ["StoreRelaySupport", "CZlib", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayDelivery",
            dependencies: [
                "StoreRelayHTTP", "StoreRelayHTTPClient", "StoreRelayFileQueue", "StoreRelayJournal", "StoreRelayConfig",
                "StoreRelayEvents", "StoreRelayCrypto", "StoreRelayJSON", "StoreRelaySupport",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayMetrics",
            dependencies: ["StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayAdmin",
            dependencies: [
                "StoreRelayHTTP", "StoreRelayDelivery", "StoreRelayMetrics", "StoreRelayCrypto", "StoreRelayEvents",
                "StoreRelayConfig", "StoreRelayJSON", "StoreRelaySupport",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelaySimulator",
            dependencies: [
                "StoreRelayCrypto", "StoreRelayHTTPClient", "StoreRelayNet", "StoreRelayJSON", "StoreRelaySupport", "COpenSSL",
                "CStoreRelayShims",
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreRelayGateway",
            dependencies: [
                "StoreRelayHTTP", "StoreRelayCrypto", "StoreRelayAppStore", "StoreRelayEvents",
                "StoreRelayConfig", "StoreRelayJournal", "StoreRelayDelivery", "StoreRelayAdmin", "StoreRelayMetrics",
                "StoreRelayJSON", "StoreRelaySupport", "CStoreRelayShims",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storerelay",
            dependencies: [
                "StoreRelayGateway", "StoreRelayAdmin", "StoreRelayConfig", "StoreRelaySimulator", "StoreRelayHTTP",
                "StoreRelayHTTPClient", "StoreRelayNet", "StoreRelayJSON", "StoreRelaySupport", "CStoreRelayShims",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .target(
            name: "StoreRelayTestSupport",
            dependencies: ["StoreRelaySupport", "StoreRelayJSON", "StoreRelayCrypto"],
            path: "Tests/StoreRelayTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "JSONTests", dependencies: ["StoreRelayJSON", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SupportTests", dependencies: ["StoreRelaySupport"], swiftSettings: swiftSettings),
        .testTarget(name: "NetTests", dependencies: ["StoreRelayNet"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HTTPTests",
            dependencies: ["StoreRelayHTTP", "StoreRelayTLS", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CryptoTests",
            dependencies: ["StoreRelayCrypto", "StoreRelayTestSupport", "COpenSSL", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreTests",
            dependencies: ["StoreRelayAppStore", "StoreRelayCrypto", "StoreRelayJSON", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventsTests",
            dependencies: ["StoreRelayEvents", "StoreRelayAppStore", "StoreRelayJSON", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ConfigTests",
            dependencies: ["StoreRelayConfig", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JournalTests",
            dependencies: ["StoreRelayJournal", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TLSTests",
            dependencies: ["StoreRelayTLS", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPClientTests",
            dependencies: ["StoreRelayHTTPClient", "StoreRelayNet", "StoreRelayTLS", "StoreRelayHTTP", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FileQueueTests",
            dependencies: ["StoreRelayFileQueue", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DeliveryTests",
            dependencies: [
                "StoreRelayDelivery", "StoreRelayConfig", "StoreRelayEvents", "StoreRelayJournal", "StoreRelayJSON",
                "StoreRelayCrypto", "StoreRelayHTTP", "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MetricsTests",
            dependencies: ["StoreRelayMetrics", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AdminTests",
            dependencies: [
                "StoreRelayAdmin", "StoreRelayDelivery", "StoreRelayMetrics", "StoreRelayHTTP", "StoreRelayEvents",
                "StoreRelayJSON", "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SimulatorTests",
            dependencies: [
                "StoreRelaySimulator", "StoreRelayAppStore", "StoreRelayCrypto", "StoreRelayHTTPClient", "StoreRelayJSON",
                "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: ["StoreRelayGateway"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["StoreRelayTestSupport", "StoreRelayJSON", "StoreRelaySupport"],
            swiftSettings: swiftSettings
        ),
    ]
)

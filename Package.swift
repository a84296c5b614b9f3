// swift-tools-version:6.0
import PackageDescription

/// Every Swift target is built in the Swift 6 language mode with `any` spelled out.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreRelay",
    products: [
        .executable(name: "storerelay", targets: ["storerelay"]),
        // Libraries for the on-demand packages beside this one (Fuzz/, Benchmarks/).
        .library(name: "StoreRelayCore", targets: ["StoreRelayCore"]),
        .library(name: "StoreRelayNet", targets: ["StoreRelayNet"]),
        .library(name: "StoreRelayCrypto", targets: ["StoreRelayCrypto"]),
        .library(name: "StoreRelayVerification", targets: ["StoreRelayVerification"]),
        .library(name: "StoreRelayConfig", targets: ["StoreRelayConfig"]),
        .library(name: "StoreRelayStorage", targets: ["StoreRelayStorage"]),
        .library(name: "StoreRelayDelivery", targets: ["StoreRelayDelivery"]),
        .library(name: "StoreRelayAWS", targets: ["StoreRelayAWS"]),
        .library(name: "StoreRelaySimulator", targets: ["StoreRelaySimulator"]),
        .library(name: "StoreRelayGooglePlay", targets: ["StoreRelayGooglePlay"]),
    ],
    targets: [
        // MARK: C libraries (system) and the one C shim target
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "CStoreRelayShims", dependencies: ["COpenSSL", "CZlib"]),

        // MARK: The layers, bottom up: each depends only on those above it in this list.
        // A notification's path: Net (accept, parse) → Verification (JWS, chain, normalize)
        // → Storage (journal) → Delivery (route, webhooks, file queues, dead letters);
        // Config describes all of it, Gateway assembles and operates it.

        // Support, JSON, metrics: what every layer uses, no I/O of its own but files.
        .target(name: "StoreRelayCore", swiftSettings: swiftSettings),
        // Sockets, TLS, the HTTP/1 codec, server and client: one transport for every socket.
        .target(
            name: "StoreRelayNet",
            dependencies: ["StoreRelayCore", "COpenSSL", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        // Hashes, HMAC, random bytes, constant-time comparison and P-256 keys on OpenSSL: what
        // the journal, the webhook signatures and the admin tokens need without trusting anyone.
        .target(
            name: "StoreRelayCrypto",
            dependencies: ["StoreRelayCore", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
        // The trust boundary: certificate chains, App Store JWS, the normalized event.
        .target(
            name: "StoreRelayVerification",
            dependencies: ["StoreRelayCore", "StoreRelayCrypto", "COpenSSL", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        // The journal and the file queues: group-committed, checksummed, recoverable.
        .target(
            name: "StoreRelayStorage",
            dependencies: ["StoreRelayCore", "StoreRelayCrypto", "CZlib"],
            swiftSettings: swiftSettings
        ),
        // AWS Signature Version 4 and the SQS JSON protocol (the `sqs` destination kind): the
        // signer needs the hashes, so it sits beside the transports rather than in them.
        .target(
            name: "StoreRelayAWS",
            dependencies: ["StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto"],
            swiftSettings: swiftSettings
        ),
        // routes.conf and the configuration model.
        .target(
            name: "StoreRelayConfig",
            dependencies: ["StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto"],
            swiftSettings: swiftSettings
        ),
        // Routing, destination queues, retries, circuit breakers, dead letters.
        .target(
            name: "StoreRelayDelivery",
            dependencies: [
                "StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayVerification", "StoreRelayStorage",
                "StoreRelayConfig", "StoreRelayAWS",
            ],
            swiftSettings: swiftSettings
        ),
        // Cluster mode on a Redis or Valkey server: acknowledgement, shared delivery queues,
        // dead letters, recent events and heartbeats.
        .target(
            name: "StoreRelayCluster",
            dependencies: [
                "StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayStorage", "StoreRelayConfig", "StoreRelayDelivery",
            ],
            swiftSettings: swiftSettings
        ),
        // The App Store Server API client: tokens, Notification History, test notifications.
        .target(
            name: "StoreRelayAppStoreAPI",
            dependencies: ["StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto"],
            swiftSettings: swiftSettings
        ),
        // Google Play: Pub/Sub push tokens (RS256 JWTs against Google's key set), developer
        // notifications, and the Play Developer API for enrichment.
        .target(
            name: "StoreRelayGooglePlay",
            dependencies: ["StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayVerification"],
            swiftSettings: swiftSettings
        ),
        // The running gateway: acceptance pipeline, admin API and page, reload, shutdown.
        .target(
            name: "StoreRelayGateway",
            dependencies: [
                "StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayVerification", "StoreRelayStorage",
                "StoreRelayConfig", "StoreRelayDelivery", "StoreRelayAppStoreAPI", "StoreRelayCluster", "StoreRelayGooglePlay",
                "CStoreRelayShims",
            ],
            swiftSettings: swiftSettings
        ),
        // The dev CA and realistic notifications for `storerelay simulate`.
        .target(
            name: "StoreRelaySimulator",
            dependencies: [
                "StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayVerification", "StoreRelayGooglePlay", "COpenSSL",
            ],
            swiftSettings: swiftSettings
        ),
        // The command line.
        .executableTarget(
            name: "storerelay",
            dependencies: [
                "StoreRelayCore", "StoreRelayNet", "StoreRelayConfig", "StoreRelayGateway", "StoreRelaySimulator",
                "CStoreRelayShims",
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests (one target per concern, on the layer that holds it)
        .target(
            name: "StoreRelayTestSupport",
            dependencies: ["CStoreRelayShims", "StoreRelayCore", "StoreRelayCrypto", "StoreRelayNet", "StoreRelayVerification"],
            path: "Tests/StoreRelayTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "JSONTests", dependencies: ["StoreRelayCore", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "SupportTests", dependencies: ["StoreRelayCore", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "MetricsTests", dependencies: ["StoreRelayCore", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "NetTests", dependencies: ["StoreRelayNet", "StoreRelayCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "NATSTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "RedisTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "TLSTests", dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "OutboundTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AMQPTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AWSTests",
            dependencies: ["StoreRelayAWS", "StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport", "CStoreRelayShims"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HTTPClientTests",
            dependencies: ["StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CryptoTests",
            dependencies: ["StoreRelayCrypto", "StoreRelayVerification", "StoreRelayCore", "StoreRelayTestSupport", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreTests",
            dependencies: ["StoreRelayVerification", "StoreRelayCrypto", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventsTests",
            dependencies: ["StoreRelayVerification", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "JournalTests",
            dependencies: ["StoreRelayStorage", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EventLogTests",
            dependencies: ["StoreRelayStorage", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FileQueueTests",
            dependencies: ["StoreRelayStorage", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ConfigTests", dependencies: ["StoreRelayConfig", "StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "DeliveryTests",
            dependencies: [
                "StoreRelayDelivery", "StoreRelayConfig", "StoreRelayVerification", "StoreRelayStorage", "StoreRelayNet",
                "StoreRelayCore", "StoreRelayTestSupport", "StoreRelayAWS",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AdminTests",
            dependencies: [
                "StoreRelayGateway", "StoreRelayDelivery", "StoreRelayStorage", "StoreRelayNet", "StoreRelayVerification", "StoreRelayCore",
                "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SimulatorTests",
            dependencies: [
                "StoreRelaySimulator", "StoreRelayVerification", "StoreRelayCrypto", "StoreRelayCore", "StoreRelayTestSupport",
                "StoreRelayGooglePlay",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "StoreRelayGateway", "StoreRelayCluster", "StoreRelayConfig", "StoreRelayDelivery", "StoreRelayAppStoreAPI",
                "StoreRelayVerification", "StoreRelayCrypto", "StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport",
                "StoreRelayGooglePlay",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ClusterTests",
            dependencies: [
                "StoreRelayCluster", "StoreRelayConfig", "StoreRelayDelivery", "StoreRelayStorage", "StoreRelayVerification", "StoreRelayNet",
                "StoreRelayCore", "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GooglePlayTests",
            dependencies: [
                "StoreRelayGooglePlay", "StoreRelayVerification", "StoreRelayCrypto", "StoreRelayNet", "StoreRelayCore",
                "StoreRelayTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppStoreAPITests",
            dependencies: ["StoreRelayAppStoreAPI", "StoreRelayCrypto", "StoreRelayNet", "StoreRelayCore", "StoreRelayTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "StoreRelayTestSupport", "StoreRelayCore", "StoreRelayNet", "StoreRelayCrypto", "StoreRelayVerification",
                "StoreRelayGateway", "StoreRelayConfig", "StoreRelayStorage",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "securepush",
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .executable(name: "securepush", targets: ["securepush"]),
        .library(name: "SecurePushCore", targets: ["SecurePushCore"]),
        // The device side for Swift apps and Notification Service Extensions: Foundation only (CryptoKit for
        // sealed previews; swift-crypto on Linux).
        .library(name: "SecurePushClient", targets: ["SecurePushClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Value types, the provider seam and pure policy (backoff, validation). No I/O.
        // The client library apps link: Foundation only (FoundationNetworking on Linux); swift-crypto on Linux
        // for sealed previews (CryptoKit on Apple platforms).
        .target(
            name: "SecurePushClient",
            dependencies: [.product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux]))],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SecurePushCore",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Everything that talks to PostgreSQL: migrations, queue, devices, notifications, status.
        .target(
            name: "SecurePushStore",
            dependencies: [
                "SecurePushCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's error type (PostgresClient throws it as is for connection timeouts), to recognise it by type.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        .executableTarget(name: "EmbedSQL", swiftSettings: swiftSettings),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["EmbedSQL"]),
        .plugin(name: "EmbedOpenAPI", capability: .buildTool(), dependencies: ["EmbedSQL"]),
        .plugin(name: "EmbedWebKit", capability: .buildTool(), dependencies: ["EmbedSQL"]),
        // Push platform clients behind the `PushProvider` seam.
        .target(
            name: "SecurePushProviders",
            dependencies: [
                "SecurePushCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The dispatcher services: listener, claim/send loop, maintenance, heartbeat.
        .target(
            name: "SecurePushDispatcher",
            dependencies: [
                "SecurePushCore",
                "SecurePushStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP API: device registration, read API, status.
        .target(
            name: "SecurePushAPI",
            dependencies: [
                "SecurePushCore",
                "SecurePushStore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                // Checks that a device's sealing key is a point on P-256.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedOpenAPI", "EmbedWebKit"]
        ),
        // Configuration and the assembly of services (shared by the CLI and the tests).
        .target(
            name: "SecurePushServer",
            dependencies: [
                "SecurePushCore",
                "SecurePushStore",
                "SecurePushProviders",
                "SecurePushDispatcher",
                "SecurePushAPI",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "securepush",
            dependencies: [
                "SecurePushServer",
                "SecurePushStore",
                "SecurePushAPI",
                "SecurePushCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // `ops/bench`'s measurements (not a test).
        .executableTarget(
            name: "SecurePushBench",
            dependencies: [
                "SecurePushCore",
                "SecurePushStore",
                "SecurePushProviders",
                "SecurePushDispatcher",
                "SecurePushServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tools/SecurePushBench",
            swiftSettings: swiftSettings
        ),
        // Shared test helpers: database access, fake push servers.
        .target(
            name: "SecurePushTestSupport",
            dependencies: [
                "SecurePushCore",
                "SecurePushStore",
                "SecurePushServer",
                "SecurePushProviders",
                "SecurePushDispatcher",
                "SecurePushAPI",
                "SecurePushClient",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/SecurePushTestSupport",
            swiftSettings: swiftSettings
        ),
        // Protocol-faithful fake push servers (APNs, FCM, OAuth, Web Push, WNS) on 127.0.0.1, shared by tests.
        .target(
            name: "SecurePushFakes",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/SecurePushFakes",
            swiftSettings: swiftSettings
        ),
        // Pushes/s through one HTTP/2 connection to the local fake APNs (a helper, not a test).
        .executableTarget(
            name: "securepush-apns-bench",
            dependencies: [
                "SecurePushCore",
                "SecurePushProviders",
                "SecurePushFakes",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Tools/SecurePushAPNsBench",
            swiftSettings: swiftSettings
        ),
        // `ops/chaos`: the failure matrix, run against real `securepush serve` processes, a real PostgreSQL and
        // the fake push servers (a helper, not a test).
        .executableTarget(
            name: "securepush-chaos",
            dependencies: [
                "SecurePushFakes",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tools/SecurePushChaos",
            swiftSettings: swiftSettings
        ),
        // Provider tests against the fake servers over loopback sockets; no database needed.
        .testTarget(
            name: "SecurePushProviderTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "SecurePushCore",
                "SecurePushProviders",
                "SecurePushServer",
                "SecurePushFakes",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                "SecurePushDispatcher",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SecurePushClientTests",
            // SecurePushProviders: the server's WebPushEncryption seals the records the tests open.
            dependencies: ["SecurePushClient", "SecurePushProviders"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SecurePushCoreTests",
            dependencies: ["SecurePushCore", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // Store tests that need no database (the migration manifest).
        .testTarget(
            name: "SecurePushStoreTests",
            dependencies: ["SecurePushStore", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        // Lane logic, wake-ups and shutdown against an in-memory queue; no database needed.
        .testTarget(
            name: "SecurePushDispatcherTests",
            dependencies: [
                "SecurePushCore",
                "SecurePushDispatcher",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The API's parsers and policies that need no database: credentials, error codes, the status views.
        .testTarget(
            name: "SecurePushAPITests",
            dependencies: [
                "SecurePushAPI",
                "SecurePushStore",
                "SecurePushCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // The pool's error type, to check that it maps to 503.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Configuration parsing; no database needed.
        .testTarget(
            name: "SecurePushServerTests",
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushAPI", "SecurePushServer", "SecurePushDispatcher",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SecurePushIntegrationTests",
            dependencies: [
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                "SecurePushClient",
                "SecurePushCore",
                "SecurePushStore",
                "SecurePushProviders",
                "SecurePushDispatcher",
                "SecurePushAPI",
                "SecurePushServer",
                "SecurePushTestSupport",
                "SecurePushFakes",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

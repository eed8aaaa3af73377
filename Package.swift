// swift-tools-version:6.1
import Foundation
import PackageDescription

/// OpenTelemetry's exporter (swift-otel) is left out of the ThreadSanitizer build: `ops/tsan` sets
/// SECUREPUSH_WITHOUT_OTEL=1, because swift-otel 1.6.0 does not compile with `-sanitize=thread` (a region-isolation
/// error in its log record processor, a module SecurePush does not use). Without it, `SECUREPUSH_OTEL_ENDPOINT`
/// is a configuration error; spans stay no-ops.
let withOTel = ProcessInfo.processInfo.environment["SECUREPUSH_WITHOUT_OTEL"] == nil

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Every library product a target imports, named once (each target lists the ones its files import:
/// `MemberImportVisibility` is on).
extension Target.Dependency {
    static var asyncHTTPClient: Self { .product(name: "AsyncHTTPClient", package: "async-http-client") }
    static var hummingbird: Self { .product(name: "Hummingbird", package: "hummingbird") }
    static var hummingbirdCore: Self { .product(name: "HummingbirdCore", package: "hummingbird") }
    static var hummingbirdTesting: Self { .product(name: "HummingbirdTesting", package: "hummingbird") }
    static var jwtKit: Self { .product(name: "JWTKit", package: "jwt-kit") }
    static var postgresNIO: Self { .product(name: "PostgresNIO", package: "postgres-nio") }
    static var connectionPool: Self { .product(name: "_ConnectionPoolModule", package: "postgres-nio") }
    static var argumentParser: Self { .product(name: "ArgumentParser", package: "swift-argument-parser") }
    static var crypto: Self { .product(name: "Crypto", package: "swift-crypto") }
    static var cryptoExtras: Self { .product(name: "_CryptoExtras", package: "swift-crypto") }
    static var httpTypes: Self { .product(name: "HTTPTypes", package: "swift-http-types") }
    static var logging: Self { .product(name: "Logging", package: "swift-log") }
    static var coreMetrics: Self { .product(name: "CoreMetrics", package: "swift-metrics") }
    static var metrics: Self { .product(name: "Metrics", package: "swift-metrics") }
    static var nioConcurrencyHelpers: Self { .product(name: "NIOConcurrencyHelpers", package: "swift-nio") }
    static var nioCore: Self { .product(name: "NIOCore", package: "swift-nio") }
    static var nioFoundationEssentialsCompat: Self { .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio") }
    static var nioHTTP1: Self { .product(name: "NIOHTTP1", package: "swift-nio") }
    static var nioPosix: Self { .product(name: "NIOPosix", package: "swift-nio") }
    static var nioTLS: Self { .product(name: "NIOTLS", package: "swift-nio") }
    static var nioHPACK: Self { .product(name: "NIOHPACK", package: "swift-nio-http2") }
    static var nioHTTP2: Self { .product(name: "NIOHTTP2", package: "swift-nio-http2") }
    static var nioSSL: Self { .product(name: "NIOSSL", package: "swift-nio-ssl") }
    static var prometheus: Self { .product(name: "Prometheus", package: "swift-prometheus") }
    static var serviceLifecycle: Self { .product(name: "ServiceLifecycle", package: "swift-service-lifecycle") }
    static var unixSignals: Self { .product(name: "UnixSignals", package: "swift-service-lifecycle") }
    static var tracing: Self { .product(name: "Tracing", package: "swift-distributed-tracing") }
    static var otel: Self { .product(name: "OTel", package: "swift-otel") }
}

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
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ]
        // OTLP over HTTP only (its default traits add a gRPC stack SecurePush does not use).
        + (withOTel ? [.package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"])] : []),
    targets: [
        // Value types, the provider seam and pure policy (backoff, validation). No I/O.
        // The client library apps link: Foundation only (FoundationNetworking on Linux); swift-crypto on Linux
        // for sealed previews (CryptoKit on Apple platforms).
        .target(
            name: "SecurePushClient",
            dependencies: [.product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux]))],
            // Its own package too (clients/swift/Package.swift): an app adds that one, without the server's dependencies.
            path: "clients/swift/Sources/SecurePushClient",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SecurePushCore",
            dependencies: [.nioConcurrencyHelpers, .logging, .serviceLifecycle, .tracing],
            swiftSettings: swiftSettings
        ),
        // PostgreSQL itself: the connection and failover layer (DATABASE_URL, the primary router, the LISTEN
        // connector, error mapping), the migration runner over the SQL files its caller hands it, rows by name.
        .target(
            name: "SecurePushPostgres",
            // .connectionPool: the pool's error type (PostgresClient throws it as is for connection timeouts), to
            // recognise it by type.
            dependencies: [
                "SecurePushCore", .postgresNIO, .connectionPool, .nioCore, .nioPosix, .nioSSL, .crypto, .logging,
                .serviceLifecycle, .nioConcurrencyHelpers,
            ],
            swiftSettings: swiftSettings
        ),
        // The operators' read models: the status report and its health rules, the support timelines and their
        // sentences (read by the API, the CLI and the status page; built by Store's StatusStore and SupportStore).
        .target(
            name: "SecurePushReports",
            dependencies: ["SecurePushCore"],
            swiftSettings: swiftSettings
        ),
        // SecurePush's schema (sql/, embedded) and its repositories: queue, devices, notifications, status.
        .target(
            name: "SecurePushStore",
            dependencies: [
                "SecurePushCore", "SecurePushPostgres", "SecurePushReports", .postgresNIO, .nioCore, .crypto, .logging, .serviceLifecycle,
                .nioConcurrencyHelpers,
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
                "SecurePushCore", "SecurePushRelayProtocol", .asyncHTTPClient, .nioCore, .nioPosix, .nioHTTP1, .nioSSL, .crypto, .cryptoExtras,
                .logging, .nioConcurrencyHelpers, .serviceLifecycle, .nioFoundationEssentialsCompat,
            ],
            swiftSettings: swiftSettings
        ),
        // What a dispatcher process runs: listener, claim/send loop, maintenance, heartbeat, and in Background/ the
        // outcome webhook, the event announcer, the relay sync and the payload purge.
        .target(
            name: "SecurePushDispatcher",
            dependencies: [
                "SecurePushCore", "SecurePushPostgres", "SecurePushRelayProtocol", .postgresNIO, .serviceLifecycle, .logging, .metrics,
                .nioConcurrencyHelpers, .tracing,
                // The outcome webhook's own HTTP client and its Standard Webhooks signature.
                .asyncHTTPClient, .nioCore, .nioHTTP1, .crypto,
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP API: device registration, read API, status.
        .target(
            name: "SecurePushAPI",
            // .crypto: checks that a device's sealing key is a point on P-256.
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", .hummingbird, .nioCore, .nioHTTP1, .jwtKit, .crypto,
                .logging,
                .metrics, .coreMetrics, .prometheus, .httpTypes, .nioFoundationEssentialsCompat, .nioConcurrencyHelpers, .tracing,
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedOpenAPI", "EmbedWebKit"]
        ),
        // The push relay's wire format and request tokens: shared by the relay and the self-hosted servers.
        .target(
            name: "SecurePushRelayProtocol",
            dependencies: ["SecurePushCore", .jwtKit, .crypto],
            swiftSettings: swiftSettings
        ),
        // The push relay (docs/relay.md): its database, routes and forwarding.
        .target(
            name: "SecurePushRelay",
            dependencies: [
                "SecurePushCore", "SecurePushPostgres", "SecurePushRelayProtocol", .postgresNIO, .hummingbird, .httpTypes, .nioCore,
                .nioFoundationEssentialsCompat, .jwtKit, .crypto, .logging, .metrics, .serviceLifecycle, .nioConcurrencyHelpers,
            ],
            swiftSettings: swiftSettings,
            plugins: ["EmbedMigrations"]
        ),
        // Configuration and the assembly of services (shared by the CLI and the tests).
        .target(
            name: "SecurePushServer",
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushProviders", "SecurePushDispatcher",
                "SecurePushAPI",
                "SecurePushRelay", "SecurePushRelayProtocol",
                .postgresNIO, .serviceLifecycle, .hummingbird, .hummingbirdCore, .nioCore, .asyncHTTPClient, .crypto,
                .logging, .metrics, .prometheus, .unixSignals, .nioConcurrencyHelpers, .nioPosix, .tracing,
            ] + (withOTel ? [.otel] : []),
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "securepush",
            dependencies: [
                "SecurePushServer", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushAPI", "SecurePushCore",
                "SecurePushRelay",
                "SecurePushRelayProtocol",
                .argumentParser, .logging,
            ],
            swiftSettings: swiftSettings
        ),
        // `ops/bench`'s measurements (not a test).
        .executableTarget(
            name: "SecurePushBench",
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushProviders", "SecurePushDispatcher",
                "SecurePushServer", .postgresNIO, .asyncHTTPClient, .nioCore, .nioHTTP1, .serviceLifecycle, .logging,
                .argumentParser, .nioConcurrencyHelpers, .nioPosix,
            ],
            path: "Tools/SecurePushBench",
            swiftSettings: swiftSettings
        ),
        // Shared test helpers: database access, the fake push services of every platform together.
        .target(
            name: "SecurePushTestSupport",
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushServer", "SecurePushProviders",
                "SecurePushDispatcher", "SecurePushAPI", "SecurePushClient", "SecurePushFakes", .postgresNIO, .serviceLifecycle,
                .hummingbird, .hummingbirdTesting, .nioCore, .crypto, .cryptoExtras, .logging, .httpTypes,
                .nioFoundationEssentialsCompat, .nioConcurrencyHelpers,
            ],
            path: "Tests/SecurePushTestSupport",
            swiftSettings: swiftSettings
        ),
        // Protocol-faithful fake push servers (APNs, FCM, OAuth, Web Push, WNS) on 127.0.0.1, shared by tests.
        .target(
            name: "SecurePushFakes",
            dependencies: [
                .nioCore, .nioPosix, .nioHTTP1, .nioHTTP2, .nioHPACK, .nioTLS, .nioSSL, .crypto, .cryptoExtras,
                .nioConcurrencyHelpers,
            ],
            path: "Tests/SecurePushFakes",
            swiftSettings: swiftSettings
        ),
        // Pushes/s through one HTTP/2 connection to the local fake APNs (a helper, not a test).
        .executableTarget(
            name: "securepush-apns-bench",
            dependencies: [
                "SecurePushCore", "SecurePushProviders", "SecurePushRelayProtocol", "SecurePushFakes", .asyncHTTPClient, .crypto, .logging,
                .nioCore,
            ],
            path: "Tools/SecurePushAPNsBench",
            swiftSettings: swiftSettings
        ),
        // `ops/chaos`: the failure matrix, run against real `securepush serve` processes, a real PostgreSQL and
        // the fake push servers (a helper, not a test).
        .executableTarget(
            name: "securepush-chaos",
            dependencies: [
                "SecurePushFakes", "SecurePushCore", "SecurePushRelayProtocol", .postgresNIO, .asyncHTTPClient, .nioCore, .nioHTTP1,
                .nioFoundationEssentialsCompat, .crypto, .cryptoExtras, .logging, .nioConcurrencyHelpers,
            ],
            path: "Tools/SecurePushChaos",
            swiftSettings: swiftSettings
        ),
        // Provider tests against the fake servers over loopback sockets; no database needed.
        .testTarget(
            name: "SecurePushProviderTests",
            dependencies: [
                "SecurePushCore", "SecurePushProviders", "SecurePushServer", "SecurePushDispatcher", "SecurePushFakes",
                "SecurePushRelayProtocol", "SecurePushTestSupport", .asyncHTTPClient, .nioCore, .nioHTTP1, .nioSSL, .crypto, .cryptoExtras, .logging,
                .nioConcurrencyHelpers,
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
            dependencies: ["SecurePushCore", .nioConcurrencyHelpers],
            swiftSettings: swiftSettings
        ),
        // Store tests that need no database (the migration manifest).
        .testTarget(
            name: "SecurePushStoreTests",
            dependencies: ["SecurePushStore", "SecurePushPostgres", "SecurePushReports", .nioConcurrencyHelpers],
            swiftSettings: swiftSettings
        ),
        // Lane logic, wake-ups and shutdown against an in-memory queue; no database needed.
        .testTarget(
            name: "SecurePushDispatcherTests",
            dependencies: [
                "SecurePushCore", "SecurePushDispatcher", "SecurePushRelayProtocol", .serviceLifecycle, .logging, .nioConcurrencyHelpers,
            ],
            swiftSettings: swiftSettings
        ),
        // The API's parsers and policies that need no database: credentials, error codes, the status views.
        .testTarget(
            name: "SecurePushAPITests",
            // .connectionPool: the pool's error type, to check that it maps to 503. HummingbirdTesting: the
            // router tested with the stores in memory (MemoryStores), no database.
            dependencies: [
                "SecurePushAPI", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushCore", .hummingbird, .hummingbirdCore,
                .hummingbirdTesting,
                .httpTypes,
                .nioCore, .nioHTTP1, .logging, .connectionPool, .crypto,
            ],
            swiftSettings: swiftSettings
        ),
        // Configuration parsing; no database needed.
        .testTarget(
            name: "SecurePushServerTests",
            dependencies: [
                "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports", "SecurePushAPI", "SecurePushServer",
                "SecurePushDispatcher",
                .postgresNIO, .logging,
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SecurePushIntegrationTests",
            dependencies: [
                .nioConcurrencyHelpers, "SecurePushClient", "SecurePushCore", "SecurePushStore", "SecurePushPostgres", "SecurePushReports",
                "SecurePushProviders", "SecurePushDispatcher", "SecurePushAPI", "SecurePushServer", "SecurePushRelayProtocol",
                "SecurePushTestSupport", "SecurePushFakes", .postgresNIO, .hummingbird, .hummingbirdTesting,
                .asyncHTTPClient, .jwtKit, .crypto, .cryptoExtras, .prometheus, .httpTypes, .logging, .nioCore,
                .nioFoundationEssentialsCompat, .nioHTTP1,
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// swift-tools-version: 6.0
// The Swift device kit as a package of its own, for an app (or its Notification Service Extension) to add:
// Foundation and CryptoKit on Apple's platforms, no dependency at all; swift-crypto on Linux only (evaluated
// where the manifest is: a build for iOS on a Mac never fetches it). docs/clients.md § Swift says how to add it.
// The server's package (the repository's root) builds the same sources as its target SecurePushClient.
import PackageDescription

#if os(Linux)
    let dependencies: [Package.Dependency] = [.package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2")]
    let kitDependencies: [Target.Dependency] = [.product(name: "Crypto", package: "swift-crypto")]
#else
    let dependencies: [Package.Dependency] = []
    let kitDependencies: [Target.Dependency] = []
#endif

let package = Package(
    name: "SecurePushClient",
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .library(name: "SecurePushClient", targets: ["SecurePushClient"])
    ],
    dependencies: dependencies,
    targets: [
        .target(
            name: "SecurePushClient",
            dependencies: kitDependencies,
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        )
    ]
)

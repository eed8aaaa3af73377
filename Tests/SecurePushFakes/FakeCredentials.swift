import Crypto
import Foundation
import _CryptoExtras

/// Throw-away credentials written to temporary files, and the `SECUREPUSH_*` settings that point a
/// SecurePush process at the fakes (for integration tests through the dispatcher). A platform added after WNS
/// keeps its own in its fake's file, as `FakeWNSServer.swift` does.
public enum FakeCredentials {
    /// The team id of the APNs app the tests configure by default.
    public static let apnsTeamID = "TEAM123456"
    /// The key id of the APNs app the tests configure by default.
    public static let apnsKeyID = "KEY1234567"
    /// The topic (bundle id) of the APNs app the tests configure by default.
    public static let apnsTopic = "com.example.securepush"

    /// An APNs token-auth key as a `.p8` file.
    public struct APNsKey: Sendable {
        /// Path of the PEM file.
        public var path: String
        /// The key.
        public var key: P256.Signing.PrivateKey
        /// The fake's view of it.
        public func signingKey(teamID: String = apnsTeamID, keyID: String = apnsKeyID) -> FakeAPNsServer.SigningKey {
            .init(teamID: teamID, keyID: keyID, publicKey: key.publicKey)
        }
    }

    /// A Google service account key file.
    public struct ServiceAccount: Sendable {
        /// Path of the JSON file.
        public var path: String
        /// The RSA key inside it.
        public var key: _RSA.Signing.PrivateKey
        /// `client_email`.
        public var clientEmail: String
        /// `project_id`.
        public var projectID: String
    }

    /// Writes a new P-256 key in PEM (PKCS#8, like Apple's `.p8`).
    public static func apnsKey() throws -> APNsKey {
        let key = P256.Signing.PrivateKey()
        return APNsKey(path: try write(key.pemRepresentation, suffix: ".p8"), key: key)
    }

    /// Writes a service-account JSON with `key` whose `token_uri` is `tokenURI` (a `FakeFCMServer.tokenURI`;
    /// start the fake with `key.publicKey` first).
    public static func serviceAccount(
        key: _RSA.Signing.PrivateKey, tokenURI: String, projectID: String = "securepush-test",
        clientEmail: String = "pusher@securepush-test.iam.gserviceaccount.com"
    ) throws -> ServiceAccount {
        let json = try JSONSerialization.data(withJSONObject: [
            "type": "service_account", "project_id": projectID, "private_key_id": "fake0001", "private_key": key.pkcs8PEMRepresentation,
            "client_email": clientEmail, "token_uri": tokenURI,
        ])
        return ServiceAccount(
            path: try write(String(decoding: json, as: UTF8.self), suffix: ".json"), key: key, clientEmail: clientEmail, projectID: projectID)
    }

    /// Writes a VAPID private key in PEM.
    public static func vapidKey() throws -> (path: String, key: P256.Signing.PrivateKey) {
        let key = P256.Signing.PrivateKey()
        return (try write(key.pemRepresentation, suffix: ".pem"), key)
    }

    /// Settings pointing APNs (both environments) at `fake` with one app.
    public static func environment(
        apns fake: FakeAPNsServer, key: APNsKey, teamID: String = apnsTeamID, keyID: String = apnsKeyID, topic: String = apnsTopic
    ) -> [String: String] {
        [
            "SECUREPUSH_APNS_KEY_FILE": key.path, "SECUREPUSH_APNS_KEY_ID": keyID, "SECUREPUSH_APNS_TEAM_ID": teamID,
            "SECUREPUSH_APNS_TOPIC": topic, "SECUREPUSH_APNS_PRODUCTION_URL": fake.baseURL, "SECUREPUSH_APNS_SANDBOX_URL": fake.baseURL,
            "SECUREPUSH_APNS_CA_FILE": fake.caFile,
        ]
    }

    /// Settings pointing FCM at `fake` (the account's `token_uri` must be `fake.tokenURI`).
    public static func environment(fcm fake: FakeFCMServer, account: ServiceAccount) -> [String: String] {
        ["SECUREPUSH_FCM_SERVICE_ACCOUNT_FILE": account.path, "SECUREPUSH_FCM_URL": fake.baseURL, "SECUREPUSH_FCM_CA_FILE": fake.caFile]
    }

    /// What lets the dispatcher reach the fakes on loopback: the non-public block they live in.
    public static let loopbackNetworks = "127.0.0.0/8"

    /// The `navigate` URL the Web Push settings name.
    public static let navigateURL = "https://app.example.com/notifications/{id}"

    /// Settings for Web Push trusting `fake`'s certificate (allowing endpoints on 127.0.0.1 and localhost, on loopback).
    public static func environment(webPush fake: FakeWebPushServer, vapidKeyFile: String, subject: String = "mailto:ops@example.com") -> [String:
        String]
    {
        [
            "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": vapidKeyFile, "SECUREPUSH_WEBPUSH_SUBJECT": subject, "SECUREPUSH_WEBPUSH_CA_FILE": fake.caFile,
            "SECUREPUSH_WEBPUSH_NAVIGATE_URL": navigateURL,
            "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS": "127.0.0.1,localhost", "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": loopbackNetworks,
        ]
    }

    static func write(_ text: String, suffix: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-fake-\(UUID().uuidString)\(suffix)").path
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ShellError(message: "cannot write \(path)")
        }
        return path
    }
}

import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing

/// Checks our wire formats with independent implementations from PyPI (installed by `ops/python-tools`).
/// Skipped, not passed, when Python or the packages are missing.
@Suite("Cross-checks with independent Python implementations", .enabled(if: PythonTools.available, "run ops/python-tools first"))
struct CrossCheckTests {
    static let verifyAPNsJWT = """
        import jwt, sys
        token = open(sys.argv[1]).read().strip()
        key = open(sys.argv[2]).read()
        header = jwt.get_unverified_header(token)
        claims = jwt.decode(token, key, algorithms=["ES256"], options={"require": ["iss", "iat"]})
        print(header["alg"], header["kid"], claims["iss"], type(claims["iat"]).__name__, sorted(header.keys()))
        """

    @Test("pyjwt verifies our APNs provider token")
    func apnsJWTWithPyJWT() async throws {
        try await APNsFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            let jwt = try #require(fixture.fake.delivered.first?.header("authorization")?.replacingOccurrences(of: "bearer ", with: ""))
            let tokenFile = try TestSupport.temporaryFile(jwt)
            let keyFile = try TestSupport.temporaryFile(fixture.key.publicKey.pemRepresentation)
            let output = try PythonTools.run(Self.verifyAPNsJWT, [tokenFile, keyFile])
            #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "ES256 \(APNsFixture.keyID) \(APNsFixture.teamID) int ['alg', 'kid']")
            // And pyjwt refuses it with another key (the check can fail).
            let otherKey = try TestSupport.temporaryFile(P256.Signing.PrivateKey().publicKey.pemRepresentation)
            #expect(throws: (any Error).self) { try PythonTools.run(Self.verifyAPNsJWT, [tokenFile, otherKey]) }
        }
    }

    static let decryptWithHTTPECE = """
        import base64, sys, http_ece
        from cryptography.hazmat.primitives import serialization
        private_key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), password=None)
        body = open(sys.argv[2], "rb").read()
        auth = base64.urlsafe_b64decode(sys.argv[3] + "=" * (-len(sys.argv[3]) % 4))
        sys.stdout.write(http_ece.decrypt(body, private_key=private_key, auth_secret=auth, version="aes128gcm").decode())
        """

    static let verifyVAPID = """
        import base64, sys, jwt
        from cryptography.hazmat.primitives.asymmetric import ec
        raw = base64.urlsafe_b64decode(sys.argv[2] + "=" * (-len(sys.argv[2]) % 4))
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
        claims = jwt.decode(sys.argv[1], key, algorithms=["ES256"], audience=sys.argv[3], options={"require": ["exp", "aud", "sub"]})
        print(claims["sub"])
        """

    @Test("http-ece decrypts our Web Push body and pyjwt verifies our VAPID token")
    func webPushWithHTTPECE() async throws {
        try await WebPushFixture.with { fixture in
            let subscription = fixture.fake.subscribe()
            let push = fixture.push(subscription)
            #expect(await fixture.provider.send(push).kind == "sent")
            let delivery = try #require(fixture.fake.deliveries.first)
            let keyFile = try TestSupport.temporaryFile(subscription.decryptor.privateKey.pemRepresentation)
            let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("securepush-body-\(UUID().uuidString)")
            try delivery.request.body.write(to: bodyFile)
            let plaintext = try PythonTools.run(Self.decryptWithHTTPECE, [keyFile, bodyFile.path, subscription.auth])
            #expect(plaintext == String(decoding: delivery.plaintext, as: UTF8.self), "http-ece reads what our fake decrypted")
            #expect(plaintext.contains(#""secureId":"\#(push.notificationID)""#))
            // With the wrong auth secret http-ece must refuse.
            #expect(throws: (any Error).self) { try PythonTools.run(Self.decryptWithHTTPECE, [keyFile, bodyFile.path, WebPushDecryptor().auth]) }

            let sub = try PythonTools.run(Self.verifyVAPID, [delivery.vapidJWT, delivery.vapidKey, fixture.fake.origin])
            #expect(sub.trimmingCharacters(in: .whitespacesAndNewlines) == "mailto:push@example.com")
            #expect(throws: (any Error).self) {
                try PythonTools.run(Self.verifyVAPID, [delivery.vapidJWT, delivery.vapidKey, "https://other.example"])
            }
        }
    }

    static let encryptWithHTTPECE = """
        import base64, os, sys, http_ece
        from cryptography.hazmat.primitives.asymmetric import ec
        ua = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), base64.urlsafe_b64decode(sys.argv[1] + "=" * (-len(sys.argv[1]) % 4)))
        auth = base64.urlsafe_b64decode(sys.argv[2] + "=" * (-len(sys.argv[2]) % 4))
        sender = ec.generate_private_key(ec.SECP256R1())
        body = http_ece.encrypt(sys.argv[3].encode(), salt=os.urandom(16), private_key=sender, dh=ua, auth_secret=auth, version="aes128gcm")
        sys.stdout.write(base64.b64encode(body).decode())
        """

    @Test("the fake's decryptor opens a body encrypted by http-ece (the fake is faithful)")
    func fakeDecryptsHTTPECE() throws {
        let decryptor = WebPushDecryptor()
        let encoded = try PythonTools.run(Self.encryptWithHTTPECE, [decryptor.p256dh, decryptor.auth, #"{"secureId":"abc"}"#])
        let body = try #require(Data(base64Encoded: encoded))
        #expect(String(decoding: try decryptor.decrypt(body), as: UTF8.self) == #"{"secureId":"abc"}"#)
    }

    static let verifyGoogleAssertion = """
        import sys, urllib.parse, jwt
        form = urllib.parse.parse_qs(open(sys.argv[1]).read())
        assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"], form["grant_type"]
        claims = jwt.decode(form["assertion"][0], open(sys.argv[2]).read(), algorithms=["RS256"], audience=sys.argv[3], options={"require": ["exp", "iat", "iss", "aud"]})
        assert claims["exp"] - claims["iat"] <= 3600
        print(claims["iss"], claims["scope"])
        """

    @Test("pyjwt verifies our Google service-account assertion")
    func fcmAssertionWithPyJWT() async throws {
        try await FCMFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: "t", platform: .fcm)).kind == "sent")
            let form = try #require(fixture.fake.requests.first { $0.path == "/token" }?.body)
            let formFile = try TestSupport.temporaryFile(String(decoding: form, as: UTF8.self))
            let keyFile = try TestSupport.temporaryFile(FCMFixture.key.publicKey.pemRepresentation)
            let output = try PythonTools.run(Self.verifyGoogleAssertion, [formFile, keyFile, fixture.fake.tokenURI])
            #expect(
                output.trimmingCharacters(in: .whitespacesAndNewlines)
                    == "\(FCMFixture.clientEmail) https://www.googleapis.com/auth/firebase.messaging")
        }
    }

    static let aioapnsClient = """
        import asyncio, ssl, sys, uuid
        from aioapns import APNs, NotificationRequest, PushType, connection
        port, ca, key_file, team, kid, topic, good, gone = sys.argv[1:9]
        connection.APNsProductionClientProtocol.APNS_SERVER = "127.0.0.1"
        connection.APNsProductionClientProtocol.APNS_PORT = int(port)
        async def main():
            apns = APNs(key=open(key_file).read(), key_id=kid, team_id=team, topic=topic, use_sandbox=False,
                        ssl_context=ssl.create_default_context(cafile=ca), max_connection_attempts=1)
            for token in (good, gone):
                request = NotificationRequest(device_token=token, message={"aps": {"content-available": 1}, "secureId": "x"},
                                              notification_id=str(uuid.uuid4()), push_type=PushType.BACKGROUND, priority=5)
                result = await apns.send_notification(request)
                print(result.status, result.description)
        asyncio.run(main())
        """

    @Test("the aioapns client is accepted by the fake APNs (the fake speaks real APNs)", .enabled(if: PythonTools.aioapnsAvailable))
    func aioapnsAgainstFake() async throws {
        try await APNsFixture.with { fixture in
            let keyFile = try TestSupport.temporaryFile(fixture.key.pemRepresentation)
            let good = TestSupport.randomHexToken()
            let gone = TestSupport.randomHexToken()
            fixture.fake.unregister(token: gone)
            let arguments = [
                String(fixture.fake.server.port), fixture.fake.caFile, keyFile, APNsFixture.teamID, APNsFixture.keyID, APNsFixture.topic, good, gone,
            ]
            let output = try await Task.detached { try PythonTools.run(Self.aioapnsClient, arguments) }.value
            #expect(output.split(separator: "\n").map(String.init) == ["200 None", "410 Unregistered"])
            let delivered = try #require(fixture.fake.delivered.first)
            #expect(delivered.path == "/3/device/\(good)")
            #expect(delivered.header("apns-push-type") == "background")
        }
    }
}

import Crypto
import Foundation
import SecurePushCore
import SecurePushFakes
import SecurePushProviders
import Testing
import _CryptoExtras

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

    /// Frame by frame with the `h2` package (aioapns's HTTP/2 layer): what clients such as aioapns and
    /// h2load rely on. One request, then 1,000 streams opened before any answer is read.
    static let h2FrameCheck = """
        import socket, ssl, sys, uuid
        import h2.config, h2.connection, h2.events
        port, ca, jwt, topic, token = sys.argv[1:6]
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(socket.create_connection(("127.0.0.1", int(port))), server_hostname="127.0.0.1")
        connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        connection.initiate_connection()
        sock.sendall(connection.data_to_send())
        sent_ids = {}
        def send():
            stream = connection.get_next_available_stream_id()
            sent_ids[stream] = str(uuid.uuid4()).upper()
            connection.send_headers(stream, [(":method", "POST"), (":scheme", "https"), (":authority", "127.0.0.1"),
                (":path", "/3/device/" + token), ("apns-id", sent_ids[stream]), ("apns-topic", topic),
                ("apns-push-type", "background"), ("apns-priority", "5"), ("authorization", "bearer " + jwt)])
            connection.send_data(stream, b'{"aps":{"content-available":1},"secureId":"x"}', end_stream=True)
        results = {}
        def read_until(count):
            while len(results) < count:
                data = sock.recv(65536)
                if not data:
                    raise SystemExit("connection closed")
                for event in connection.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived):
                        headers = dict(event.headers)
                        results[event.stream_id] = {"status": headers[":status"], "ended_on_headers": event.stream_ended is not None,
                            "echoed": headers.get("apns-id", "").upper() == sent_ids[event.stream_id], "data": 0}
                    elif isinstance(event, h2.events.DataReceived):
                        results[event.stream_id]["data"] += len(event.data)
                        connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamReset):
                        raise SystemExit(f"stream {event.stream_id} reset")
                sock.sendall(connection.data_to_send())
        send()
        sock.sendall(connection.data_to_send())
        read_until(1)
        first = results[1]
        print(first["status"], "ended_on_headers" if first["ended_on_headers"] else "body_follows", "apns_id_echoed" if first["echoed"] else "apns_id_missing", first["data"])
        print("max_concurrent_streams", connection.remote_settings.max_concurrent_streams)
        for _ in range(1000):
            send()
        sock.sendall(connection.data_to_send())
        read_until(1001)
        rest = [results[stream] for stream in sent_ids if stream != 1]
        print("concurrent", sum(r["status"] == "200" and r["ended_on_headers"] and r["echoed"] and r["data"] == 0 for r in rest))
        """

    @Test(
        "the fake APNs ends a 200 on its HEADERS frame, echoes apns-id and takes 1,000 concurrent streams (h2, frame by frame)",
        .enabled(if: PythonTools.aioapnsAvailable))
    func fakeAPNsFramesWithH2() async throws {
        try await APNsFixture.with { fixture in
            #expect(await fixture.provider.send(TestSupport.push(token: TestSupport.randomHexToken())).kind == "sent")
            let jwt = try #require(fixture.fake.delivered.first?.header("authorization")?.replacingOccurrences(of: "bearer ", with: ""))
            let arguments = [String(fixture.fake.server.port), fixture.fake.caFile, jwt, APNsFixture.topic, TestSupport.randomHexToken()]
            let output = try await Task.detached { try PythonTools.run(Self.h2FrameCheck, arguments) }.value
            #expect(
                output.split(separator: "\n").map(String.init) == [
                    "200 ended_on_headers apns_id_echoed 0", "max_concurrent_streams 1000", "concurrent 1000",
                ])
            #expect(fixture.fake.deliveredCount == 1002)
        }
    }

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

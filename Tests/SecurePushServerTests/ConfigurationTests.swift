import Foundation
import Logging
import PostgresNIO
import SecurePushAPI
import SecurePushCore
import SecurePushDispatcher
import SecurePushPostgres
import SecurePushServer
import SecurePushStore
import Synchronization
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    let base = ["DATABASE_URL": "postgres://app:s3cret@db.internal:5433/push"]

    func load(_ extra: [String: String]) throws -> SecurePushConfiguration {
        try SecurePushConfiguration(environment: base.merging(extra) { $1 })
    }

    func message(_ extra: [String: String]) -> String? {
        do {
            _ = try load(extra)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test("defaults")
    func defaults() throws {
        let configuration = try load([:])
        #expect(configuration.databaseURL.host == "db.internal")
        #expect(configuration.databaseURL.port == 5433)
        #expect(configuration.databaseURL.database == "push")
        #expect(configuration.databaseURL.password == "s3cret")
        #expect(configuration.role == .all)
        #expect(configuration.providers == [.simulated])
        #expect(configuration.dispatcher.pollInterval == .seconds(1))
        #expect(configuration.defaultTTL == .seconds(7 * 86_400))
        #expect(configuration.http.port == 8080)
        #expect(configuration.http.databaseTimeout == .seconds(10))
        #expect(try load(["SECUREPUSH_API_DB_TIMEOUT": "750ms"]).http.databaseTimeout == .milliseconds(750))
        #expect(message(["SECUREPUSH_API_DB_TIMEOUT": "10m"])?.contains("SECUREPUSH_API_DB_TIMEOUT") == true)
    }

    @Test("circuit breakers: documented defaults, settable, checked")
    func circuitBreaker() throws {
        let defaults = try load([:]).dispatcher.circuitBreaker
        #expect(defaults == CircuitBreakerPolicy())
        #expect(defaults.enabled && defaults.consecutiveFailures == 5 && defaults.failureRatio == 0.5 && defaults.minimumResults == 20)
        #expect(defaults.window == .seconds(10) && defaults.openDuration == .seconds(1) && defaults.maxOpenDuration == .seconds(60))
        let set = try load([
            "SECUREPUSH_CIRCUIT_BREAKER": "off", "SECUREPUSH_CIRCUIT_FAILURES": "10", "SECUREPUSH_CIRCUIT_OPEN": "250ms",
            "SECUREPUSH_CIRCUIT_MAX_OPEN": "5m",
        ]).dispatcher.circuitBreaker
        #expect(!set.enabled && set.consecutiveFailures == 10 && set.openDuration == .milliseconds(250) && set.maxOpenDuration == .seconds(300))
        #expect(message(["SECUREPUSH_CIRCUIT_BREAKER": "maybe"])?.contains("SECUREPUSH_CIRCUIT_BREAKER must be one of on, off") == true)
        #expect(message(["SECUREPUSH_CIRCUIT_FAILURES": "0"])?.contains("SECUREPUSH_CIRCUIT_FAILURES") == true)
        #expect(
            message(["SECUREPUSH_CIRCUIT_OPEN": "2m", "SECUREPUSH_CIRCUIT_MAX_OPEN": "1m"])?.contains(
                "SECUREPUSH_CIRCUIT_MAX_OPEN must not be shorter")
                == true)
    }

    @Test("a bad value is a clear error naming the variable, never echoing the password")
    func badValues() {
        #expect(message(["SECUREPUSH_BATCH_SIZE": "lots"])?.contains("SECUREPUSH_BATCH_SIZE must be an integer") == true)
        #expect(message(["SECUREPUSH_POLL_INTERVAL": "1 fortnight"])?.contains("SECUREPUSH_POLL_INTERVAL") == true)
        #expect(message(["SECUREPUSH_ROLE": "boss"])?.contains("SECUREPUSH_ROLE must be one of api, dispatcher, all") == true)
        #expect(message(["SECUREPUSH_PROVIDERS": "simulated,pager"])?.contains("pager") == true)
        #expect(message(["SECUREPUSH_USER_JWT_SECRET": "short"])?.contains("at least 32 bytes") == true)
        // 31 bytes would trip jwt-kit's HMAC key-size assertion (a crash in debug builds): refused up front.
        #expect(message(["SECUREPUSH_USER_JWT_SECRET": String(repeating: "k", count: 31)])?.contains("at least 32 bytes") == true)
        #expect(
            message(["SECUREPUSH_USER_JWT_SECRET": String(repeating: "k", count: 32), "SECUREPUSH_USER_JWT_PUBLIC_KEY": "/x.pem"])?
                .contains("not both") == true)
        #expect(message(["SECUREPUSH_RETRY_BASE": "10s", "SECUREPUSH_RETRY_MAX": "1s"])?.contains("SECUREPUSH_RETRY_MAX") == true)
        let badURL = (try? SecurePushConfiguration(environment: ["DATABASE_URL": "mysql://u:s3cret@h/db"])) == nil
        #expect(badURL)
        do {
            _ = try SecurePushConfiguration(environment: ["DATABASE_URL": "mysql://u:s3cret@h/db"])
        } catch {
            #expect(!"\(error)".contains("s3cret"))
        }
        #expect(message(["DATABASE_URL": ""])?.contains("DATABASE_URL is not set") == true)
    }

    @Test("trusted proxies are addresses and CIDR blocks; IPv4-mapped peers match their IPv4 block; a typo is refused")
    func trustedProxies() throws {
        let proxies = try load(["SECUREPUSH_TRUSTED_PROXIES": "10.8.0.0/16, 192.0.2.7 ,fd00::/8"]).http.limits.trustedProxies
        for trusted in ["10.8.0.1", "10.8.255.254", "192.0.2.7", "fd00::1", "fdff:1::2", "::ffff:10.8.3.4"] {
            #expect(proxies.trusts(trusted), "\(trusted)")
        }
        for untrusted in ["10.9.0.1", "192.0.2.8", "fe80::1", "::ffff:10.9.0.1", "unknown", "", "10.8.0.1/16"] {
            #expect(!proxies.trusts(untrusted), "\(untrusted)")
        }
        #expect(try load([:]).http.limits.trustedProxies == .none)
        #expect(message(["SECUREPUSH_TRUSTED_PROXIES": "10.0.0.1/8"])?.contains("SECUREPUSH_TRUSTED_PROXIES lists \"10.0.0.1/8\"") == true)
        #expect(message(["SECUREPUSH_TRUSTED_PROXIES": "proxy.internal"])?.contains("not an address or a CIDR block") == true)
    }

    @Test("durations", arguments: [("250ms", 250), ("5s", 5000), ("2m", 120_000), ("1h", 3_600_000), ("7d", 604_800_000), ("1.5", 1500)])
    func durations(text: String, milliseconds: Int64) {
        #expect(ConfigurationValues.parseDuration(text) == .milliseconds(milliseconds))
        #expect(ConfigurationValues.parseDuration(text)?.wholeMilliseconds == milliseconds)
    }

    @Test("`migrate` and `status` read only the database settings, never provider credentials")
    func databaseOnly() throws {
        // APNs listed without any of its credentials: `serve` must refuse it, `migrate`/`status` must not care.
        let environment = base.merging(["SECUREPUSH_PROVIDERS": "apns", "SECUREPUSH_DEFAULT_TTL": "2d", "SECUREPUSH_LOG_LEVEL": "debug"]) { $1 }
        #expect(throws: ConfigurationError.self) { try SecurePushConfiguration(environment: environment) }
        let database = try DatabaseConfiguration(values: ConfigurationValues(environment))
        #expect(database.url.host == "db.internal")
        #expect(database.defaultTTL == .seconds(2 * 86_400))
        #expect(database.logLevel == .debug)
        let flagged = try DatabaseConfiguration(
            values: ConfigurationValues(environment), databaseURL: "postgres://other@127.0.0.1:6000/x", logLevel: .error)
        #expect(flagged.url.port == 6000)
        #expect(flagged.logLevel == .error)
    }

    @Test("typed flags take precedence over the environment and obey the same ranges")
    func overrides() throws {
        var overrides = SecurePushConfiguration.Overrides()
        overrides.role = .api
        overrides.port = 9090
        overrides.concurrency = 7
        overrides.batchSize = 11
        overrides.pollInterval = .milliseconds(250)
        overrides.providers = "simulated"
        let environment = base.merging(["SECUREPUSH_PORT": "8081", "SECUREPUSH_ROLE": "dispatcher", "SECUREPUSH_CONCURRENCY": "3"]) { $1 }
        let configuration = try SecurePushConfiguration(environment: environment, overrides: overrides)
        #expect(configuration.role == .api)
        #expect(configuration.http.port == 9090)
        #expect(configuration.dispatcher.concurrency == 7)
        #expect(configuration.dispatcher.batchSize == 11)
        #expect(configuration.dispatcher.pollInterval == .milliseconds(250))

        var outOfRange = SecurePushConfiguration.Overrides()
        outOfRange.port = 70_000
        #expect(throws: ConfigurationError.self) { try SecurePushConfiguration(environment: base, overrides: outOfRange) }
        outOfRange = SecurePushConfiguration.Overrides()
        outOfRange.pollInterval = .milliseconds(1)
        #expect(throws: ConfigurationError.self) { try SecurePushConfiguration(environment: base, overrides: outOfRange) }
    }

    @Test("a unix socket directory in DATABASE_URL")
    func unixSocket() throws {
        let url = try DatabaseURL("postgres://securepush@localhost:5432/securepush?host=/var/run/postgresql")
        #expect(url.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        let client = url.clientConfiguration()
        #expect(client.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
    }

    @Test("DATABASE_URL in libpq's URI dialect: several hosts, per-host and listed ports, IPv6, the accepted parameters")
    func multiHost() throws {
        let url = try DatabaseURL(
            "postgres://app:s%3Acret@h1:5441,h2,[fd00::7]:5443/push?target_session_attrs=read-write&connect_timeout=3&application_name=sp&sslmode=disable"
        )
        #expect(url.endpoints == [.init(host: "h1", port: 5441), .init(host: "h2", port: 5432), .init(host: "fd00::7", port: 5443)])
        #expect(url.username == "app" && url.password == "s:cret" && url.database == "push")
        #expect(url.targetSessionAttributes == .readWrite)
        #expect(url.connectTimeout == .seconds(3))
        #expect(url.applicationName == "sp")
        #expect(url.description == "postgres://app:***@h1:5441,h2:5432,[fd00::7]:5443/push", "no password in the description")
        let listed = try DatabaseURL("postgresql://app@/push?host=a,b&port=6001,6002")
        #expect(listed.endpoints == [.init(host: "a", port: 6001), .init(host: "b", port: 6002)])
        #expect(try DatabaseURL("postgres://u@h/db").targetSessionAttributes == .readWrite, "SecurePush's default: a writable primary")
        for attributes in ["any", "primary", "read-write"] {
            #expect(try DatabaseURL("postgres://u@h/db?target_session_attrs=\(attributes)").targetSessionAttributes.allowsPrimary)
        }
        #expect(try DatabaseURL("postgres://u@h/db?connect_timeout=1").connectTimeout == .seconds(2), "as libpq: at least 2 s")
        #expect(try DatabaseURL("postgres://u@h/db?sslmode=verify-full&sslrootcert=/etc/ca.pem").tls == .verifyFull)
        #expect(try DatabaseURL("postgres://u@h/db?sslmode=verify-ca").tls == .verifyCA)
    }

    @Test("libpq's PGSSLMODE, PGSSLROOTCERT, PGSSLCERT and PGSSLKEY fill in what DATABASE_URL leaves out; the URL wins")
    func libpqEnvironment() throws {
        let environment = ["PGSSLMODE": "verify-full", "PGSSLROOTCERT": "/run/ca.crt", "PGSSLCERT": "/run/c.crt", "PGSSLKEY": "/run/c.key"]
        let filled = try DatabaseURL("postgres://u@h/db", environment: environment)
        #expect(filled.tls == .verifyFull && filled.sslRootCert == "/run/ca.crt" && filled.sslCert == "/run/c.crt" && filled.sslKey == "/run/c.key")
        let own = try DatabaseURL("postgres://u@h/db?sslmode=disable&sslrootcert=/etc/ca.pem", environment: environment)
        #expect(own.tls == .disable && own.sslRootCert == "/etc/ca.pem", "the URL's own parameters win")
        #expect(throws: ConfigurationError.self, "a key without its certificate") {
            try DatabaseURL("postgres://u@h/db", environment: ["PGSSLKEY": "/k"])
        }
        let missing = message(["PGSSLROOTCERT": "/nonexistent/securepush-ca.crt"])
        #expect(missing?.contains("TLS files") == true, "an unreadable certificate file fails at start-up, by name: \(missing ?? "no error")")
        #expect(message(["SECUREPUSH_STARTUP_WAIT": "5m"]) == nil)
        #expect(try load(["SECUREPUSH_STARTUP_WAIT": "5m"]).database.startupWait == .seconds(300))
        #expect(try load([:]).database.startupWait == .zero, "fails at once unless asked to wait")
        #expect(message(["SECUREPUSH_STARTUP_WAIT": "soon"])?.contains("SECUREPUSH_STARTUP_WAIT") == true)
    }

    @Test("the start-up wait retries what may yet come true until it does, and fails at once on anything else")
    func startupWait() async throws {
        let wait = StartupWait(limit: .seconds(30), interval: .milliseconds(10))
        let tries = Atomic<Int>(0)
        let result = try await wait.run(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) {
            guard tries.add(1, ordering: .relaxed).newValue >= 3 else { throw StartupNotReady("the database needs migrations 028_x") }
            return "ready"
        }
        #expect(result == "ready" && tries.load(ordering: .relaxed) == 3)
        let once = Atomic<Int>(0)
        await #expect(throws: ConfigurationError.self) {
            try await StartupWait(limit: .zero).run(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) {
                () async throws -> Int in
                _ = once.add(1, ordering: .relaxed)
                throw StartupNotReady("cannot use the database")
            }
        }
        #expect(once.load(ordering: .relaxed) == 1, "a limit of zero tries once")
        let permanent = Atomic<Int>(0)
        await #expect(throws: ConfigurationError.self) {
            try await wait.run(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })) { () async throws -> Int in
                _ = permanent.add(1, ordering: .relaxed)
                throw ConfigurationError("the database schema does not match this build")
            }
        }
        #expect(permanent.load(ordering: .relaxed) == 1, "an error that cannot go away is not retried")
        let expired = Atomic<Int>(0)
        await #expect(throws: ConfigurationError.self) {
            try await StartupWait(limit: .milliseconds(100), interval: .milliseconds(10)).run(
                logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            ) {
                () async throws -> Int in
                _ = expired.add(1, ordering: .relaxed)
                throw StartupNotReady("cannot use the database")
            }
        }
        #expect(expired.load(ordering: .relaxed) > 1, "tried again until the limit")
    }

    @Test("DATABASE_URL refuses unknown parameters by name, standby-only session attributes and malformed host lists")
    func multiHostRefusals() throws {
        func message(_ text: String) -> String? {
            do {
                _ = try DatabaseURL(text)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(message("postgres://u:pw@h/db?keepalives=1")?.contains("keepalives") == true)
        #expect(message("postgres://u:pw@h/db?fallback_application_name=x")?.contains("fallback_application_name") == true)
        for attributes in ["standby", "read-only", "prefer-standby"] {
            #expect(message("postgres://u:pw@h/db?target_session_attrs=\(attributes)")?.contains("standby") == true, "\(attributes)")
        }
        #expect(message("postgres://u:pw@h/db?target_session_attrs=sometimes") != nil)
        #expect(message("postgres://u:pw@h1,,h3/db") != nil)
        #expect(message("postgres://u:pw@h1:99999/db") != nil)
        #expect(message("postgres://u:pw@[::1/db") != nil)
        #expect(message("postgres://u:pw@h/db?sslcert=/c.pem") != nil, "a certificate without its key")
        #expect(message("postgres://u:pw@h/db?sslmode=sometimes") != nil)
        for text in ["postgres://u:pw@h/db?keepalives=1", "postgres://u:pw@h1,,h3/db"] {
            #expect(message(text)?.contains("pw") == false, "the password is never echoed")
        }
    }
}

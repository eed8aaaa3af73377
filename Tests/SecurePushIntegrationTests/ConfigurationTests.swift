import Foundation
import SecurePushServer
import SecurePushStore
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
    }

    @Test("a bad value is a clear error naming the variable, never echoing the password")
    func badValues() {
        #expect(message(["SECUREPUSH_BATCH_SIZE": "lots"])?.contains("SECUREPUSH_BATCH_SIZE must be an integer") == true)
        #expect(message(["SECUREPUSH_POLL_INTERVAL": "1 fortnight"])?.contains("SECUREPUSH_POLL_INTERVAL") == true)
        #expect(message(["SECUREPUSH_ROLE": "boss"])?.contains("SECUREPUSH_ROLE must be one of api, dispatcher, all") == true)
        #expect(message(["SECUREPUSH_PROVIDERS": "simulated,pager"])?.contains("pager") == true)
        #expect(message(["SECUREPUSH_USER_JWT_SECRET": "short"])?.contains("at least 16 bytes") == true)
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

    @Test("durations", arguments: [("250ms", 250), ("5s", 5000), ("2m", 120_000), ("1h", 3_600_000), ("7d", 604_800_000), ("1.5", 1500)])
    func durations(text: String, milliseconds: Int64) {
        #expect(ConfigurationValues.parseDuration(text)?.components.seconds == milliseconds / 1000)
    }

    @Test("a unix socket directory in DATABASE_URL")
    func unixSocket() throws {
        let url = try DatabaseURL("postgres://securepush@localhost:5432/securepush?host=/var/run/postgresql")
        #expect(url.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        let client = url.clientConfiguration()
        #expect(client.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
    }
}

import Foundation
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import PostgresNIO
import SecurePushCore
import SecurePushPostgres

/// The relay's database (`sql/relay/`, schema `securepush_relay`): installations, token bindings (keyed
/// digests), usage, request ids and the audit. No push is ever stored.
public struct RelayStore: Sendable {
    /// An installation as the operator's commands show it.
    public struct Installation: Sendable {
        public var id: UUID
        public var name: String
        public var keyVersion: Int
        public var disabled: Bool
        public var createdAt: Date
        public var pushesPerMinute: Int?
        public var pushesPerDay: Int?
        public var maxTokens: Int?
        public var tokens: Int
        public var pushesLastHour: Int
        public var pushesLastDay: Int
        /// Whether its pushes may have urgency `critical` (`relay installation set-policy --critical`).
        public var criticalAllowed: Bool
    }

    /// Quotas; `nil` leaves one as it is, `.some(nil)` removes it.
    public struct Quotas: Sendable {
        public var pushesPerMinute: Int??
        public var pushesPerDay: Int??
        public var maxTokens: Int??

        /// Creates quotas.
        public init(pushesPerMinute: Int?? = nil, pushesPerDay: Int?? = nil, maxTokens: Int?? = nil) {
            self.pushesPerMinute = pushesPerMinute
            self.pushesPerDay = pushesPerDay
            self.maxTokens = maxTokens
        }
    }

    let client: any DatabaseClient
    let logger: Logger

    /// The `count` installations with the most pushes in the last hour (then the last day): what `/status`
    /// and `/metrics` show by name, bounded whatever the number of installations.
    public static func busiest(_ installations: [Installation], count: Int) -> [Installation] {
        Array(installations.sorted { ($0.pushesLastHour, $0.pushesLastDay) > ($1.pushesLastHour, $1.pushesLastDay) }.prefix(count))
    }

    /// A store on `client`.
    public init(client: any DatabaseClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    private func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await client.run(query, logger: logger).collect()
    }

    /// Runs `query` in a transaction of its own that commits synchronously (`synchronous_commit = on`), whatever
    /// the pool's commit mode: durable, on a synchronous standby too, before it returns.
    private func durably(_ query: PostgresQuery) async throws -> [PostgresRow] {
        let logger = self.logger
        return try await client.leased { connection in
            _ = try await connection.query("BEGIN", logger: logger)
            do {
                _ = try await connection.query("SET LOCAL synchronous_commit = on", logger: logger)
                let rows = try await connection.query(query, logger: logger).collect()
                _ = try await connection.query("COMMIT", logger: logger)
                return rows
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Runs `change` (an INSERT or UPDATE of `securepush_relay.installations` ... `RETURNING id`) and audits
    /// `event` for the installation it wrote, in one statement; true when it wrote one.
    private func audited(_ event: String, _ change: PostgresQuery) async throws -> Bool {
        var binds = change.binds
        binds.append(event)
        let query = PostgresQuery(
            unsafeSQL: """
                WITH changed AS (\(change.sql)), audited AS (
                    INSERT INTO securepush_relay.audit (event, installation_id) SELECT $\(binds.count), id FROM changed
                )
                SELECT count(*)::bigint FROM changed
                """, binds: binds)
        return try await rows(query).first?.decode(Int64.self) == 1
    }

    /// Adds an installation with `publicKey`; returns its id.
    public func add(name: String, publicKey: Data, quotas: Quotas) async throws -> UUID {
        let id = UUID()
        _ = try await audited(
            "installation_added",
            """
            INSERT INTO securepush_relay.installations (id, name, public_key, pushes_per_minute, pushes_per_day, max_tokens)
            VALUES (\(id), \(name), \(publicKey), \(quotas.pushesPerMinute ?? nil), \(quotas.pushesPerDay ?? nil), \(quotas.maxTokens ?? nil))
            RETURNING id
            """)
        return id
    }

    /// Every installation, by name.
    public func installations() async throws -> [Installation] {
        let rows = try await rows(
            """
            SELECT i.id, i.name, i.key_version, i.disabled_at IS NOT NULL, i.created_at, i.pushes_per_minute, i.pushes_per_day, i.max_tokens,
                   i.critical_allowed,
                   (SELECT count(*) FROM securepush_relay.bindings b WHERE b.installation_id = i.id),
                   (SELECT coalesce(sum(u.pushes), 0)::bigint FROM securepush_relay.usage u
                    WHERE u.installation_id = i.id AND u.minute > now() - interval '1 hour'),
                   (SELECT coalesce(sum(u.pushes), 0)::bigint FROM securepush_relay.usage u
                    WHERE u.installation_id = i.id AND u.minute > now() - interval '1 day')
            FROM securepush_relay.installations i ORDER BY i.name
            """)
        return try rows.map { row in
            let (id, name, version, disabled, created, perMinute, perDay, maxTokens, critical, tokens, hour, day) = try row.decode(
                (UUID, String, Int32, Bool, Date, Int32?, Int32?, Int32?, Bool, Int64, Int64, Int64).self)
            return Installation(
                id: id, name: name, keyVersion: Int(version), disabled: disabled, createdAt: created, pushesPerMinute: perMinute.map(Int.init),
                pushesPerDay: perDay.map(Int.init), maxTokens: maxTokens.map(Int.init), tokens: Int(tokens), pushesLastHour: Int(hour),
                pushesLastDay: Int(day), criticalAllowed: critical)
        }
    }

    /// The installation named `reference` (its id, or its name); `nil` when none.
    public func find(_ reference: String) async throws -> UUID? {
        let id = UUID(canonical: Array(reference.utf8)[...])
        let rows = try await rows("SELECT id FROM securepush_relay.installations WHERE id = \(id) OR name = \(reference)")
        return try rows.first?.decode(UUID.self)
    }

    /// Disables or enables an installation; false when there is none.
    public func setDisabled(_ id: UUID, _ disabled: Bool) async throws -> Bool {
        try await audited(
            disabled ? "installation_disabled" : "installation_enabled",
            """
            UPDATE securepush_relay.installations SET disabled_at = CASE WHEN \(disabled) THEN coalesce(disabled_at, now()) END
            WHERE id = \(id) RETURNING id
            """)
    }

    /// Replaces an installation's key (the old one stops working at once); false when there is none.
    public func rotateKey(_ id: UUID, publicKey: Data) async throws -> Bool {
        try await audited(
            "key_rotated",
            """
            UPDATE securepush_relay.installations SET public_key = \(publicKey), key_version = key_version + 1
            WHERE id = \(id) RETURNING id
            """)
    }

    /// Changes the quotas given; false when there is no such installation.
    public func setQuotas(_ id: UUID, _ quotas: Quotas) async throws -> Bool {
        try await audited(
            "quota_set",
            """
            UPDATE securepush_relay.installations SET
                pushes_per_minute = CASE WHEN \(quotas.pushesPerMinute != nil) THEN \(quotas.pushesPerMinute ?? nil) ELSE pushes_per_minute END,
                pushes_per_day = CASE WHEN \(quotas.pushesPerDay != nil) THEN \(quotas.pushesPerDay ?? nil) ELSE pushes_per_day END,
                max_tokens = CASE WHEN \(quotas.maxTokens != nil) THEN \(quotas.maxTokens ?? nil) ELSE max_tokens END
            WHERE id = \(id) RETURNING id
            """)
    }

    /// Changes what an installation may send; false when there is none. The key's version moves too, so every
    /// relay process reloads what it cached of the installation at its next request (`admit` answers `stale`).
    public func setPolicy(_ id: UUID, criticalAllowed: Bool) async throws -> Bool {
        try await audited(
            "policy_set",
            """
            UPDATE securepush_relay.installations SET critical_allowed = \(criticalAllowed), key_version = key_version + 1
            WHERE id = \(id) RETURNING id
            """)
    }

    /// What checking a request of `id` needs: its public key, the key's version (which moves with the key and
    /// the policy) and its policy; `nil` when there is no such installation. (Whether it is disabled is
    /// `admit`'s answer, read with the request.)
    public func credential(of id: UUID) async throws -> (publicKey: Data, keyVersion: Int, criticalAllowed: Bool)? {
        let rows = try await rows("SELECT public_key, key_version, critical_allowed FROM securepush_relay.installations WHERE id = \(id)")
        guard let row = rows.first else { return nil }
        let (key, version, critical) = try row.decode((ByteBuffer, Int32, Bool).self)
        return (Data(buffer: key), Int(version), critical)
    }

    /// What `admit` found.
    public enum Admission: Sendable, Equatable {
        /// Admitted: which digests are bound to the installation, the quota's wait (0: taken), and whether the
        /// database counted them (else the relay does, `RelayUsage`).
        case admitted(bound: Set<Data>, wait: Double, counted: Bool)
        /// No such installation, or its key is no longer version `keyVersion`; nothing was written.
        case stale
        case disabled
        /// The request id was seen before.
        case replay
    }

    /// Admits a request whose signature checked with version `keyVersion` of the installation's key, in one
    /// round trip (`securepush_relay.admit`): the key is still current and the installation enabled, the
    /// request id `jti` is new (recorded until `expires`), and for the `digests` bound to the installation
    /// the quota is taken.
    public func admit(_ installation: UUID, keyVersion: Int, jti: String, expires: Date, digests: [Data]) async throws -> Admission {
        let rows = try await rows(
            """
            SELECT * FROM securepush_relay.admit(\(installation), \(Int32(keyVersion)), \(jti), \(expires),
                \(digests.map { ByteBuffer(data: $0) })::bytea[])
            """)
        guard let row = rows.first else { return .stale }
        let admitted = try AdmitRow(row: row)
        switch admitted.verdict {
        case "ok": return .admitted(bound: Set(admitted.bound.map { Data(buffer: $0) }), wait: admitted.wait, counted: admitted.counted)
        case "disabled": return .disabled
        case "replay": return .replay
        default: return .stale
        }
    }

    /// Binds digests to `installation` (other installations keep their bindings of the same tokens: each
    /// pushes to them); returns how many were new, `nil` when its `max_tokens` would be exceeded.
    public func bind(_ installation: UUID, digests: [Data]) async throws -> Int? {
        guard !digests.isEmpty else { return 0 }
        // Durable before it is answered, whatever the pool's commit mode: the self-hosted server forgets a change
        // once the relay took it, and a binding lost in a crash would refuse that device's pushes.
        let rows = try await durably(
            "SELECT securepush_relay.bind(\(installation), \(digests.map { ByteBuffer(data: $0) })::bytea[])")
        let changed = try rows.first?.decode(Int32.self) ?? 0
        return changed < 0 ? nil : Int(changed)
    }

    /// Releases digests bound to `installation` (`securepush_relay.unbind`; other installations' bindings of the
    /// same tokens stay); returns how many.
    public func release(_ installation: UUID, digests: [Data]) async throws -> Int {
        guard !digests.isEmpty else { return 0 }
        let rows = try await rows("SELECT securepush_relay.unbind(\(installation), \(digests.map { ByteBuffer(data: $0) })::bytea[])")
        return Int(try rows.first?.decode(Int32.self) ?? 0)
    }

    /// Adds pushes counted in memory to this minute's usage (`securepush_relay.add_usage`).
    public func addUsage(_ counts: [UUID: Int]) async throws {
        guard !counts.isEmpty else { return }
        let installations = Array(counts.keys)
        // Committed synchronously, unlike the pool's other writes: a flush that reached a primary cut off from its
        // standbys (a partition; the old primary still serving a connection made before it) would otherwise be
        // acknowledged there and lost with it, and the counts taken from memory with it; a synchronous commit waits
        // until that connection fails instead, and the counts are kept for the next flush (ops/failover, drop).
        _ = try await durably(
            "SELECT securepush_relay.add_usage(\(installations)::uuid[], \(installations.map { Int64(counts[$0]!) })::bigint[])")
    }

    /// Deletes expired request ids and old usage.
    public func prune() async throws -> Int {
        let rows = try await rows("SELECT securepush_relay.prune()")
        return Int(try rows.first?.decode(Int32.self) ?? 0)
    }
}

import Foundation
import PostgresNIO
import SecurePushTestSupport
import Testing

/// `securepush.quiet_release` (migration 016) against its definition: the first instant at or after `at`
/// whose wall clock in the zone is outside the window. The oracle walks minute by minute and asks only the
/// wall clock, so it shares no code with the function: DST gaps, repeated hours, 30-minute and 45-minute
/// offsets, a skipped day (Samoa, 2011) and windows across midnight are all just wall-clock readings to it.
@Suite("Quiet hours across DST changes")
struct QuietHoursPropertyTests {
    /// The oracle: minute-aligned instants from `at` up to 50 hours on, the first outside the window.
    static let oracle = """
        CREATE FUNCTION pg_temp.oracle(z text, s time, e time, at timestamptz) RETURNS timestamptz LANGUAGE sql AS $$
            SELECT min(i) FROM generate_series(at, at + interval '50 hours', interval '1 minute') i
            WHERE NOT (CASE WHEN s < e THEN (i AT TIME ZONE z)::time >= s AND (i AT TIME ZONE z)::time < e
                            ELSE (i AT TIME ZONE z)::time >= s OR (i AT TIME ZONE z)::time < e END)
        $$
        """

    /// Zones and instants near their transitions (UTC): spring-forward and fall-back nights.
    static let transitions: [(zone: String, instants: [String])] = [
        ("America/New_York", ["2025-03-09 07:00Z", "2025-11-02 06:00Z", "2026-03-08 07:00Z"]),
        ("Europe/Berlin", ["2025-03-30 01:00Z", "2025-10-26 01:00Z"]),
        ("Europe/London", ["2025-03-30 01:00Z", "2025-10-26 01:00Z"]),
        ("Australia/Lord_Howe", ["2025-04-05 15:00Z", "2025-10-04 15:30Z"]),
        ("America/Santiago", ["2025-04-06 03:00Z", "2025-09-07 04:00Z"]),
        ("Asia/Kathmandu", ["2025-06-01 00:00Z"]),
        ("Pacific/Apia", ["2011-12-30 10:00Z"]),
        ("America/St_Johns", ["2025-03-09 05:30Z", "2025-11-02 04:30Z"]),
    ]

    /// A deterministic generator (SplitMix64), so a failure names a case that reproduces.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func clock(_ minutes: Int) -> String {
        String(format: "%02d:%02d", minutes / 60, minutes % 60)
    }

    @Test("random windows and instants within 30 hours of transitions in eight zones agree with the wall-clock oracle")
    func agreesWithOracle() async throws {
        var generator = Generator(state: 20_261_124)
        var zones: [String] = []
        var starts: [String] = []
        var ends: [String] = []
        var bases: [String] = []
        var offsets: [Int] = []
        for (zone, around) in Self.transitions {
            for instant in around {
                for _ in 0..<25 {
                    // Windows on a 15-minute grid, so their ends meet the gaps and repeated hours; instants on the minute.
                    let start = Int.random(in: 0..<96, using: &generator) * 15
                    var end = Int.random(in: 0..<96, using: &generator) * 15
                    if end == start { end = (end + 60) % 1440 }
                    zones.append(zone)
                    starts.append(Self.clock(start))
                    ends.append(Self.clock(end))
                    bases.append(instant)
                    offsets.append(Int.random(in: -1800...1800, using: &generator))
                }
            }
        }
        let (zoneList, startList, endList, baseList, offsetList) = (zones, starts, ends, bases, offsets)
        try await TestDatabase.with { db in
            try await db.client.withConnection { connection in
                _ = try await connection.query(PostgresQuery(unsafeSQL: Self.oracle), logger: db.logger).collect()
                let rows = try await connection.query(
                    """
                    SELECT z, s::text, e::text, at::text, securepush.quiet_release(z, s, e, at)::text, pg_temp.oracle(z, s, e, at)::text
                    FROM (SELECT z, s::time AS s, e::time AS e, b::timestamptz + o * interval '1 minute' AS at
                          FROM unnest(\(zoneList)::text[], \(startList)::text[], \(endList)::text[], \(baseList)::text[], \(offsetList)::integer[])
                               AS u(z, s, e, b, o)) c
                    """, logger: db.logger
                ).collect()
                #expect(rows.count == zoneList.count)
                var disagreements: [String] = []
                for row in rows {
                    let (zone, start, end, at, released, expected) = try row.decode((String, String, String, String, String, String).self)
                    if released != expected { disagreements.append("\(zone) [\(start), \(end)) at \(at): \(released), oracle \(expected)") }
                }
                #expect(disagreements.isEmpty, "\(disagreements.count) of \(rows.count): \(disagreements.prefix(5))")
            }
        }
    }

    @Test("named cases: a gap inside a window across midnight, an end inside the gap, an end in the repeated hour, a 30-minute gap")
    func namedCases() async throws {
        let cases: [(zone: String, start: String, end: String, at: String, expected: String)] = [
            // 22:00-07:00 on the spring-forward night: 07:00 EDT, though the night was an hour shorter.
            ("America/New_York", "22:00", "07:00", "2025-03-09 06:30+00", "2025-03-09 11:00:00+00"),
            // The window ends at 02:30, which never happens that night: it ends at the jump (03:00 EDT).
            ("America/New_York", "01:00", "02:30", "2025-03-09 06:10+00", "2025-03-09 07:00:00+00"),
            // 01:30 happens twice on the fall-back night: the window ends at the first one.
            ("America/New_York", "23:00", "01:30", "2025-11-02 04:10+00", "2025-11-02 05:30:00+00"),
            // Lord Howe moves its clock by 30 minutes: 02:15 is inside the gap, so the window ends at 02:30 LHDT.
            ("Australia/Lord_Howe", "01:00", "02:15", "2025-10-04 14:40+00", "2025-10-04 15:30:00+00"),
            // Outside the window: at once.
            ("Europe/Berlin", "22:00", "07:00", "2025-06-01 10:00+00", "2025-06-01 10:00:00+00"),
        ]
        try await TestDatabase.with { db in
            for item in cases {
                let released: String = try await db.scalar(
                    "SELECT securepush.quiet_release(\(item.zone), \(item.start)::time, \(item.end)::time, \(item.at)::timestamptz)::text")
                #expect(released == item.expected, "\(item.zone) [\(item.start), \(item.end)) at \(item.at)")
            }
        }
    }
}

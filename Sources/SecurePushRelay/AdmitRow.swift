import Foundation
import NIOCore
import PostgresNIO
import SecurePushPostgres

/// The row of `securepush_relay.admit` (`sql/relay/routines/admit.sql`).
public struct AdmitRow: FunctionRow {
    public static let function = "securepush_relay.admit(uuid, integer, text, timestamptz, bytea[])"
    public static let columns = ["verdict", "bound", "wait", "counted"]

    /// `ok`, `stale`, `disabled` or `replay`.
    public var verdict: String
    /// The digests bound to the installation among those named.
    public var bound: [ByteBuffer]
    /// The quota's wait in seconds (0: taken).
    public var wait: Double
    /// Whether the database counted the pushes (an installation with a quota); else the relay counts them
    /// (`RelayUsage`).
    public var counted: Bool

    public init(_ row: NamedRow) throws {
        verdict = try row("verdict")
        bound = try row("bound")
        wait = try row("wait")
        counted = try row("counted")
    }
}

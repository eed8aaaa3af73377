/// What `migrate` and `relay migrate` print about the migrations they applied: one short line however many there
/// were (a fresh database applies every one of them).
enum MigrationSummary {
    /// `<command>: applied 001_a.sql`, `<command>: applied 001_a.sql and 002_b.sql`, or
    /// `<command>: applied 40 migrations, 001_a.sql to 040_b.sql`; or that the schema was already up to date.
    static func line(_ command: String, applied: [String], known: Int) -> String {
        switch applied.count {
        case 0: "\(command): schema is up to date (\(known) migrations)"
        case 1: "\(command): applied \(applied[0])"
        case 2: "\(command): applied \(applied[0]) and \(applied[1])"
        default: "\(command): applied \(applied.count) migrations, \(applied[0]) to \(applied[applied.count - 1])"
        }
    }
}

import Foundation
import NIOConcurrencyHelpers

/// A row's outcome: the loss checker's figures, the row's own figures and its checks.
final class RowReport: Sendable {
    private struct State {
        var figures: [(String, String)] = []
        var checks: [(String, Bool)] = []
        var loss = LossReport(ledger: [:], devices: [], attempts: [])
        var seconds = 0.0
        /// A failover row's cells before its verdict (see `FailoverRow`), and its notes (aims missed).
        var failoverCells: [String]?
        var notes: [String] = []
    }

    let row: ChaosRow
    private let state = NIOLockedValueBox(State())

    init(row: ChaosRow) { self.row = row }

    /// Adds a figure shown in the table.
    func figure(_ name: String, _ value: String) {
        state.withLockedValue { $0.figures.append((name, value)) }
    }

    /// Records a check; a failed one fails the row (and `ops/chaos`).
    func check(_ name: String, _ passed: Bool) {
        state.withLockedValue { $0.checks.append((name, passed)) }
    }

    /// Sets the loss checker's result and the row's duration.
    func finish(loss: LossReport, seconds: Double) {
        state.withLockedValue {
            $0.loss = loss
            $0.seconds = seconds
        }
    }

    /// Sets a failover row's cells (route … API after); the verdict is added from the checks.
    func setFailoverCells(_ cells: [String]) {
        state.withLockedValue { $0.failoverCells = cells }
    }

    /// A remark for the verdict that fails nothing (an aim missed).
    func note(_ text: String) {
        state.withLockedValue { $0.notes.append(text) }
    }

    /// Every figure so far.
    var figures: [(String, String)] { state.withLockedValue { $0.figures } }

    /// The failed checks.
    var failures: [String] { state.withLockedValue { $0.checks.filter { !$0.1 }.map(\.0) } }

    /// This row as a markdown table row.
    var markdownRow: String {
        state.withLockedValue { state in
            let failed = state.checks.filter { !$0.1 }.map(\.0)
            if let cells = state.failoverCells {
                var verdict = failed.isEmpty ? "ok" : "FAILED: " + failed.joined(separator: "; ")
                if !state.notes.isEmpty {
                    verdict += (failed.isEmpty ? " (" : "; ") + state.notes.joined(separator: "; ") + (failed.isEmpty ? ")" : "")
                }
                return "| " + (cells + [verdict]).map { $0.replacingOccurrences(of: "|", with: "/") }.joined(separator: " | ") + " |"
            }
            let checks = failed.isEmpty ? "ok (\(state.checks.count))" : "FAILED: " + failed.joined(separator: "; ")
            let figures = state.figures.map { "\($0.0) \($0.1)" }.joined(separator: "; ")
            let loss = state.loss
            let cells = [
                row.rawValue, String(format: "%.0f s", state.seconds), "\(loss.committed)", "\(loss.expected)", "\(loss.delivered)", "\(loss.lost)",
                "\(loss.unexpected)", "\(loss.duplicates)", checks, figures,
            ]
            return "| " + cells.map { $0.replacingOccurrences(of: "|", with: "/") }.joined(separator: " | ") + " |"
        }
    }
}

/// Formats seconds for figures.
func seconds(_ value: Double) -> String {
    String(format: "%.2f s", value)
}

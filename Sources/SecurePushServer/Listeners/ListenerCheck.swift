import Foundation
import NIOCore
import NIOPosix
import SecurePushCore
import SecurePushStore

/// Checks, before any service starts, that each address the process is to listen on can be bound, so that a port
/// another process holds is one sentence naming the address and its settings, instead of seconds of warnings
/// from services shutting down and a raw `bind(...)` error. (The listener binds a moment later: a process that
/// takes the port in between still meets the raw error.)
enum ListenerCheck {
    /// An address to listen on and the settings that chose it.
    struct Listener: Sendable {
        var host: String
        var port: Int
        var settings: String
    }

    /// Throws a `ConfigurationError` for the first listener that cannot be bound (port 0, any free port, is skipped).
    static func ensureFree(_ listeners: [Listener]) async throws {
        for listener in listeners where listener.port != 0 {
            let address = "\(listener.host):\(listener.port)"
            do {
                // As the listener binds (SO_REUSEADDR): a socket in TIME_WAIT from a previous run is no conflict.
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                    .bind(host: listener.host, port: listener.port)
                    .get()
                try await channel.close()
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                throw ConfigurationError(
                    "cannot listen on \(address) (\(listener.settings)): the address is in use, another process listens there; stop it, or set \(listener.settings) to a free address"
                )
            } catch let error as IOError where error.errnoCode == EACCES {
                throw ConfigurationError(
                    "cannot listen on \(address) (\(listener.settings)): permission denied (ports below 1024 need privileges); choose a port above 1023"
                )
            } catch {
                throw ConfigurationError("cannot listen on \(address) (\(listener.settings)): \(error)")
            }
        }
    }
}

import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit, raised at start-up so `SECUREPUSH_MAX_CONNECTIONS` sockets (plus the
/// database pools and files) fit: the soft limit goes up to what is needed, never above the hard limit.
enum FileDescriptorLimit {
    /// Descriptors kept for everything that is not a client connection.
    static let reserve: rlim_t = 1024

    /// Raises the soft limit toward `connections + reserve`; logs when the hard limit is lower.
    static func raise(toFit connections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(resourceKind, &limit) == 0 else { return }
        let wanted = rlim_t(connections) + reserve
        guard limit.rlim_cur < wanted else { return }
        let target = min(wanted, limit.rlim_max)
        if target > limit.rlim_cur {
            var raised = limit
            raised.rlim_cur = target
            if setrlimit(resourceKind, &raised) == 0 { limit = raised }
        }
        if limit.rlim_cur < wanted {
            logger.warning(
                "the open-file limit is below SECUREPUSH_MAX_CONNECTIONS plus a reserve: raise it (LimitNOFILE, ulimit -n)",
                metadata: ["process.nofile": "\(limit.rlim_cur)", "process.nofile_wanted": "\(wanted)"])
        }
    }

    #if canImport(Glibc)
        private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resourceKind = RLIMIT_NOFILE
    #endif
}

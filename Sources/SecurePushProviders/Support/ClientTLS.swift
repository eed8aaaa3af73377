import NIOSSL

/// Builds the client TLS configuration providers attach to each request.
package enum ClientTLS {
    /// TLS 1.2+ with the system trust store, or only the PEM CA certificates in `caFile` when set.
    /// `partition` is a pool-partitioning tag (see `APNsProvider`); it has no effect on the handshake.
    package static func configuration(caFile: String?, partition: String? = nil) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        if let caFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        }
        // `pskHint` is only used by TLS servers; a client ignores it. AsyncHTTPClient keys its connection
        // pools on the whole TLS configuration, so a distinct hint gives a distinct pool of connections.
        tls.pskHint = partition
        return tls
    }
}

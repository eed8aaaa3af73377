// Measures pushes per second through the APNs provider to the fake APNs over one HTTP/2 connection
// (TLS on 127.0.0.1). A helper for ops/bench, not a test. Three ways to run it:
//
//   securepush-apns-bench [pushes=5000] [in-flight=100]
//       fake and provider in this one process (they share the CPU: a lower bound for the client).
//   securepush-apns-bench --serve-fake DIR [--max-streams 1000] [--initial-streams 1]
//       only the fake, until SIGTERM. Like APNs with token auth, a connection allows one stream
//       (--initial-streams) until a valid provider token arrives, then --max-streams. It writes its
//       signing key to DIR/key.p8, prints one line
//       `fake port=… ca=… key=… team=… key_id=… topic=… jwt=…` (jwt: a valid provider token for
//       clients that cannot sign, such as h2load), and on SIGUSR1 prints `stats accepted=… connections=…`.
//   securepush-apns-bench --client --port P --ca FILE --key FILE [--count 20000] [--in-flight 100] [--sealed 1]
//       only SecurePush's provider, against a fake in another process; with --sealed 1 every push carries a
//       preview sealed to a device key (SECUREPUSH_SEALED_PREVIEWS=on).
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

do {
    if arguments.first == "--serve-fake" {
        try await FakeMode.run(BenchArguments(arguments.dropFirst()))
    } else if arguments.first == "--client" {
        try await ClientMode.run(BenchArguments(arguments.dropFirst()))
    } else {
        let numbers = arguments.compactMap { Int($0) }
        try await InProcessMode.run(pushes: numbers.first ?? 5000, inFlight: numbers.dropFirst().first ?? 100)
    }
} catch {
    FileHandle.standardError.write(Data("securepush-apns-bench: \(error)\n".utf8))
    exit(1)
}

import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay simulate --out`: a body saved to a file, or written into whatever already
/// stands at the path when that is not a regular file.
@Suite("Simulator output", .serialized)
struct SimulateOutputTests {
    /// README's first step is `--out /dev/null`. Replacing the path whole (write a temporary
    /// file, rename it over) put a regular file in the device's place when run as root; a
    /// FIFO shows the same without root: it must still be a FIFO, and its reader gets the body.
    @Test func writesIntoAFIFOInsteadOfReplacingIt() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate-out")
        try "data ./data\n".write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        let script = """
            set -e
            mkfifo body.fifo
            cat body.fifo > received.json &
            reader=$!
            '\(TestPaths.binary.path)' simulate --type TEST --out body.fifo --config routes.conf
            # Replaced, the FIFO would never see a writer: stop its reader rather than hang.
            if ! test -p body.fifo; then kill $reader; echo "body.fifo was replaced" >&2; exit 1; fi
            wait $reader
            """
        let result = try CommandRunner.run("/bin/sh", ["-c", script], directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let received = try Data(contentsOf: directory.appendingPathComponent("received.json"))
        let body = try JSONValue.parse(Array(received))
        #expect(body["signedPayload"]?.stringValue?.split(separator: ".").count == 3)
    }

    @Test func replacesARegularFileWhole() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate-out")
        try "data ./data\n".write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        let path = directory.appendingPathComponent("body.json")
        try String(repeating: "x", count: 100_000).write(to: path, atomically: true, encoding: .utf8)
        let result = try CommandRunner.storerelay(["simulate", "--type", "TEST", "--out", path.path, "--config", "routes.conf"],
                                                  directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let body = try JSONValue.parse(Array(try Data(contentsOf: path)))
        #expect(body["signedPayload"] != nil, "the old, longer content must be gone entirely")
    }

    /// `--product consumable` for a refund gives a consumable's transaction; for a type only
    /// subscriptions have, or an unknown product, it is a usage error naming the option.
    /// `--product commitment` works for subscription types only.
    @Test func productOption() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-simulate-product")
        try "data ./data\n".write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        let refund = try CommandRunner.storerelay(
            ["simulate", "--type", "REFUND", "--product", "consumable", "--out", "-", "--config", "routes.conf"], directory: directory)
        #expect(refund.status == 0, "\(refund.stderr)")
        let signed = try #require(try JSONValue.parse(Array(refund.stdout.utf8))["signedPayload"]?.stringValue)
        let payload = try JSONValue.parse(Base64.urlDecode(String(signed.split(separator: ".")[1])) ?? [])
        #expect(payload["data"]?["signedRenewalInfo"] == nil && payload["data"]?["status"] == nil)
        #expect(payload["data"]?["signedTransactionInfo"] != nil)

        let renew = try CommandRunner.storerelay(
            ["simulate", "--type", "DID_RENEW", "--product", "consumable", "--config", "routes.conf"], directory: directory)
        #expect(renew.status == 2 && renew.stderr.contains("consumable"), "\(renew.status) \(renew.stderr)")
        let bogus = try CommandRunner.storerelay(
            ["simulate", "--type", "REFUND", "--product", "coins", "--config", "routes.conf"], directory: directory)
        #expect(bogus.status == 2 && bogus.stderr.contains("--product must be subscription, consumable or commitment"), "\(bogus.stderr)")

        let committed = try CommandRunner.storerelay(
            ["simulate", "--type", "DID_RENEW", "--product", "commitment", "--out", "-", "--config", "routes.conf"], directory: directory)
        #expect(committed.status == 0, "\(committed.stderr)")
        let test = try CommandRunner.storerelay(
            ["simulate", "--type", "TEST", "--product", "commitment", "--config", "routes.conf"], directory: directory)
        #expect(test.status == 2 && test.stderr.contains("cannot carry a commitment"), "\(test.status) \(test.stderr)")
    }
}

import Foundation
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelaySimulator
import StoreRelayCore
import StoreRelayTestSupport
import Testing

@Suite struct DevCertificateAuthorityTests {
    @Test func isCreatedOnceThenReusedWithPrivateKeys() throws {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-devca").path + "/data"
        let first = try DevCertificateAuthority.loadOrCreate(dataDirectory: data)
        #expect(first.wasCreated)
        #expect(first.directory == data + "/dev-ca")
        let names = try FileManager.default.contentsOfDirectory(atPath: first.directory).sorted()
        #expect(names == ["intermediate.pem", "leaf-key.pem", "leaf.pem", "root.pem"])
        #expect(try SimulatorFixtures.mode(first.directory + "/leaf-key.pem") == 0o600)
        #expect(try SimulatorFixtures.mode(first.directory) == 0o700)
        let before = try names.map { try Data(contentsOf: URL(fileURLWithPath: first.directory + "/" + $0)) }

        let second = try DevCertificateAuthority.loadOrCreate(dataDirectory: data)
        #expect(!second.wasCreated)
        #expect(second.root.derBytes == first.root.derBytes)
        #expect(second.intermediate.derBytes == first.intermediate.derBytes)
        #expect(second.leaf.derBytes == first.leaf.derBytes)
        #expect(try second.leafKey.pemString() == first.leafKey.pemString())
        let after = try names.map { try Data(contentsOf: URL(fileURLWithPath: first.directory + "/" + $0)) }
        #expect(after == before)
        #expect(try SimulatorFixtures.mode(first.directory + "/leaf-key.pem") == 0o600)
        // No staging directory is left next to it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: data) == ["dev-ca"])
    }

    @Test func chainCarriesAppleMarkerOIDsAndRealisticSubjects() throws {
        let authority = try SimulatorFixtures.authority()
        #expect(authority.leaf.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
        #expect(!authority.leaf.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        #expect(authority.intermediate.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        #expect(!authority.intermediate.hasExtension(oid: SignedDataVerifier.leafMarkerOID))
        #expect(!authority.root.hasExtension(oid: SignedDataVerifier.intermediateMarkerOID))
        #expect(authority.root.subject.contains("CN=StoreRelay Dev Root CA"))
        #expect(authority.root.issuer == authority.root.subject)
        #expect(authority.intermediate.issuer == authority.root.subject)
        #expect(authority.leaf.issuer == authority.intermediate.subject)
        #expect(Set([authority.root, authority.intermediate, authority.leaf].map(\.serialNumberHex)).count == 3)
        #expect(authority.x5c == [authority.leaf, authority.intermediate, authority.root].map { Base64.encode($0.derBytes) })
    }

    @Test func validFromYesterdayForTenYears() throws {
        let instant = SimulatorFixtures.instant
        let authority = try SimulatorFixtures.authority(clock: FixedClock(instant: instant))
        let day: Int64 = 86_400
        for certificate in [authority.root, authority.intermediate, authority.leaf] {
            #expect(certificate.notBefore.seconds == instant.seconds - day)
            #expect(certificate.notAfter.seconds >= instant.seconds + 3652 * day)
            #expect(certificate.notAfter.seconds <= instant.seconds + 3654 * day)
        }
    }

    @Test func chainVerifiesWithTheOpenSSLCommandLine() throws {
        let authority = try SimulatorFixtures.authority(clock: WallClock())
        let directory = URL(fileURLWithPath: authority.directory)
        let output = try CommandRunner.run(
            "openssl", ["verify", "-CAfile", "root.pem", "-untrusted", "intermediate.pem", "leaf.pem"],
            directory: directory, check: true)
        #expect(output.stdout.contains("leaf.pem: OK"))
        // And the intermediate is required: the leaf alone does not chain to the root.
        let alone = try CommandRunner.run("openssl", ["verify", "-CAfile", "root.pem", "leaf.pem"], directory: directory)
        #expect(alone.status != 0)
        // The key on disk is the leaf's key, in a form the CLI reads.
        let publicFromKey = try CommandRunner.run("openssl", ["pkey", "-in", "leaf-key.pem", "-pubout"],
                                                  directory: directory, check: true)
        let publicFromLeaf = try CommandRunner.run("openssl", ["x509", "-in", "leaf.pem", "-noout", "-pubkey"],
                                                   directory: directory, check: true)
        #expect(publicFromKey.stdoutBytes == publicFromLeaf.stdoutBytes)
    }

    @Test func incompleteDirectoryIsRefusedNotRegenerated() throws {
        let authority = try SimulatorFixtures.authority()
        try FileManager.default.removeItem(atPath: authority.directory + "/leaf-key.pem")
        let error = #expect(throws: SimulatorError.self) {
            try DevCertificateAuthority.loadOrCreate(directory: authority.directory)
        }
        #expect(error?.code == .certificateAuthority)
        #expect(error?.message.contains("leaf-key.pem") == true)
    }

    @Test func foreignLeafKeyIsRefused() throws {
        let authority = try SimulatorFixtures.authority()
        let path = authority.directory + "/leaf-key.pem"
        try FileManager.default.removeItem(atPath: path)
        try P256PrivateKey.generate().pemString().write(toFile: path, atomically: true, encoding: .utf8)
        let error = #expect(throws: SimulatorError.self) {
            try DevCertificateAuthority.loadOrCreate(directory: authority.directory)
        }
        #expect(error?.code == .certificateAuthority)
        #expect(error?.message.contains("does not belong") == true)
    }

    @Test func concurrentFirstRunsAgreeOnOneAuthority() throws {
        let data = try TestPaths.makeTemporaryDirectory("storerelay-devca-race").path + "/data"
        let roots = Locked<[[UInt8]]>([])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let authority = try DevCertificateAuthority.loadOrCreate(dataDirectory: data)
                roots.withLock { $0.append(authority.root.derBytes) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.current.isEmpty, "\(failures.current)")
        #expect(roots.current.count == 4)
        #expect(Set(roots.current).count == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: data) == ["dev-ca"])
    }
}

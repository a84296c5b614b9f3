import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// PyPI's `moto` server as an SQS endpoint on a free loopback port: a real implementation of
/// the SQS JSON protocol (it checks the request's shape, not its signature). Started once per
/// suite; killed (SIGKILL) when released or when the test process exits.
///
/// Read back with `boto3` through `python(_:)`: a real client, never one written for the test.
public final class MotoServerProcess: @unchecked Sendable {
    public let port: Int
    private let process: ChildProcess

    /// Whether moto's server and boto3 are installed (script/setup installs both).
    public static var isAvailable: Bool {
        (try? CommandRunner.run("python3", ["-c", "import moto.server, boto3"]).status) == 0
    }

    public static let skipMessage = "moto[server] or boto3 is not installed (script/setup installs them)"

    /// The credentials and region the tests sign with (moto accepts any).
    public static let accessKeyId = "AKIDEXAMPLE"
    public static let secretAccessKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    public static let region = "us-east-1"

    public init() throws {
        port = try RedisServerProcess.freePort()
        process = ChildProcess()
        try launch()
    }

    /// Freezes the server (SIGSTOP): connections are still accepted and nothing answers, so
    /// every request times out, as with an unreachable endpoint. moto keeps its queues in
    /// memory, so a frozen server (unlike a killed one) comes back with them.
    public func pause() { process.freeze() }

    /// Lets a paused server run again (SIGCONT).
    public func resume() { process.send(SIGCONT) }

    private func launch() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try ExitWatchdog.watch(process.processIdentifier)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? python("sqs.list_queues()")) != nil { return }
            guard process.isRunning else { break }
            usleep(200_000)
        }
        stop()
        throw RedisServerError("moto's server did not answer on port \(port)")
    }

    deinit { stop() }

    public var endpoint: String { "http://127.0.0.1:\(port)" }

    public func stop() {
        process.killAndWait()
    }

    /// Runs a Python script with `sqs` bound to a boto3 SQS client of this server; returns
    /// its standard output. Throws when it exits non-zero.
    @discardableResult
    public func python(_ script: String) throws -> String {
        let prelude = """
            import boto3, json, sys
            sqs = boto3.client('sqs', endpoint_url='\(endpoint)', region_name='\(Self.region)',
                               aws_access_key_id='\(Self.accessKeyId)', aws_secret_access_key='\(Self.secretAccessKey)')

            """
        return try CommandRunner.run("python3", ["-c", prelude + script], check: true).stdout
    }

    /// Creates `name` (FIFO when it ends in `.fifo`) and returns its URL as AWS spells it.
    public func createQueue(_ name: String) throws -> String {
        let attributes = name.hasSuffix(".fifo") ? "{'FifoQueue': 'true'}" : "{}"
        _ = try python("sqs.create_queue(QueueName='\(name)', Attributes=\(attributes))")
        return "https://sqs.\(Self.region).amazonaws.com/123456789012/\(name)"
    }

    /// Receives every message now in `queue` (deleted once read): one JSON object each with
    /// `body`, `attributes` (string message attributes) and `groupId`/`dedupId` for FIFO queues.
    public func drain(queue: String) throws -> [String] {
        try python("""
            url = sqs.get_queue_url(QueueName='\(queue)')['QueueUrl']
            while True:
                r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=['All'],
                                        AttributeNames=['MessageGroupId', 'MessageDeduplicationId'], WaitTimeSeconds=0)
                ms = r.get('Messages', [])
                if not ms: break
                for m in ms:
                    print(json.dumps({'body': m['Body'],
                                      'attributes': {k: v.get('StringValue') for k, v in m.get('MessageAttributes', {}).items()},
                                      'groupId': m.get('Attributes', {}).get('MessageGroupId'),
                                      'dedupId': m.get('Attributes', {}).get('MessageDeduplicationId')}))
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=m['ReceiptHandle'])
            """).split(separator: "\n").map(String.init)
    }
}

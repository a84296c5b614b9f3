import Foundation
@testable import StoreRelayAWS
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Signature Version 4 against AWS's published examples and botocore's signer.
struct SigV4SignerTests {
    static let credentials = AWSCredentials(accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    /// 2015-08-30T12:36:00Z, the examples' date.
    static let exampleTime = Timestamp(seconds: 1_440_938_160)

    private func signed(_ method: String, _ url: String, headers: HTTPHeaders = [:], body: String = "", service: String,
                        credentials: AWSCredentials = credentials, time: Timestamp = exampleTime) throws -> HTTPClientRequest {
        var request = try HTTPClientRequest(method: method, url: url, headers: headers, body: Array(body.utf8))
        SigV4Signer(credentials: credentials, region: "us-east-1", service: service).sign(&request, at: time)
        return request
    }

    @Test func theDateIsInAmzFormat() {
        #expect(SigV4Signer.amzDate(Self.exampleTime) == "20150830T123600Z")
    }

    /// aws-sig-v4-test-suite `get-vanilla`.
    @Test func getVanilla() throws {
        let request = try signed("GET", "https://example.amazonaws.com/", service: "service")
        #expect(request.headers["X-Amz-Date"] == "20150830T123600Z")
        #expect(request.headers["Authorization"] == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            + "SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    /// The IAM ListUsers example of AWS's "Signature Version 4 signing process" guide.
    @Test func iamListUsers() throws {
        let request = try signed("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
                                 headers: ["Content-Type": "application/x-www-form-urlencoded; charset=utf-8"], service: "iam")
        #expect(request.headers["Authorization"]?.hasSuffix("SignedHeaders=content-type;host;x-amz-date, "
            + "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7") == true)
    }

    @Test func queriesAreSortedAndEncodedOnce() {
        #expect(SigV4Signer.canonicalQuery("b=2&a=%2F x&a=1") == "a=%2F%20x&a=1&b=2")
        #expect(SigV4Signer.canonicalPath("/123/my queue") == "/123/my%20queue")
        #expect(SigV4Signer.canonicalPath("") == "/")
    }

    static let botocoreAvailable = (try? CommandRunner.run("python3", ["-c", "import botocore"]).status) == 0

    /// botocore's SigV4Auth for the same request, time and credentials.
    private func botocore(_ request: HTTPClientRequest, service: String, credentials: AWSCredentials, time: Timestamp) throws -> String {
        var headers: [String: String] = [:]
        for field in request.headers where !["authorization", "x-amz-date", "x-amz-security-token"].contains(field.name.lowercased()) {
            headers[field.name] = field.value
        }
        var spec: [String: Any] = [
            "key": credentials.accessKeyId, "secret": credentials.secretAccessKey, "method": request.method,
            "url": request.url.absoluteString, "headers": headers, "body": String(decoding: request.body, as: UTF8.self),
            "date": SigV4Signer.amzDate(time), "service": service, "region": "us-east-1",
        ]
        if let token = credentials.sessionToken { spec["token"] = token }
        let script = """
            import sys, json, datetime
            from unittest import mock
            import botocore.auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            spec = json.load(sys.stdin)
            req = AWSRequest(method=spec['method'], url=spec['url'], headers=spec['headers'], data=spec['body'].encode())
            when = datetime.datetime.strptime(spec['date'], '%Y%m%dT%H%M%SZ')
            with mock.patch('botocore.auth.get_current_datetime', return_value=when):
                botocore.auth.SigV4Auth(Credentials(spec['key'], spec['secret'], spec.get('token')), spec['service'], spec['region']).add_auth(req)
            print(req.headers['Authorization'])
            """
        let input = try JSONSerialization.data(withJSONObject: spec)
        return try CommandRunner.run("python3", ["-c", script], stdin: Array(input), check: true).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: botocoreAvailable, "botocore is not installed (script/setup installs boto3)"))
    func agreesWithBotocore() throws {
        let temporary = AWSCredentials(accessKeyId: "ASIAEXAMPLE", secretAccessKey: "s3cr3t/+=", sessionToken: "FwoGZXIvYXdzEXAMPLE//token=")
        let time = Timestamp(seconds: 1_795_000_000)
        let cases: [(String, String, HTTPHeaders, String, String, AWSCredentials)] = [
            ("POST", "https://sqs.eu-west-1.amazonaws.com/",
             ["Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"],
             #"{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/123456789012/appstore","MessageBody":"{\"id\":\"é\"}"}"#, "sqs", Self.credentials),
            ("POST", "http://127.0.0.1:4566/", ["Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessage"],
             "{}", "sqs", temporary),
            ("GET", "https://example.amazonaws.com/a%20b/c?z=1&a=%2F&a=0", ["X-Custom": "  spaced   value  "], "", "service", Self.credentials),
        ]
        for (method, url, headers, body, service, credentials) in cases {
            let request = try signed(method, url, headers: headers, body: body, service: service, credentials: credentials, time: time)
            #expect(request.headers["Authorization"] == (try botocore(request, service: service, credentials: credentials, time: time)),
                    "\(method) \(url)")
            #expect(request.headers["X-Amz-Security-Token"] == credentials.sessionToken)
        }
    }

    @Test func credentialsNeverShowTheirSecret() {
        let credentials = AWSCredentials(accessKeyId: "AKID", secretAccessKey: "topsecret", sessionToken: "tokentoken")
        for text in ["\(credentials)", String(reflecting: credentials), "\(Mirror(reflecting: credentials).children.map { $0.value })"] {
            #expect(!text.contains("topsecret") && !text.contains("tokentoken"), "\(text)")
        }
    }
}

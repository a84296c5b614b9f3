import StoreRelayAWS
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Reading SQS's answers and what each means.
struct SQSAnswerTests {
    private func answer(_ status: Int, _ body: String, headers: HTTPHeaders = [:]) -> SQSAnswer {
        SQSAnswer(status: status, headers: headers, body: Array(body.utf8))
    }

    @Test func successCarriesTheMessageId() {
        let ok = answer(200, #"{"MD5OfMessageBody":"99914b932bd37a50b983c5e7c90ae93b","MessageId":"5fea7756-0ea4-451a-a703-a558b933e274"}"#)
        #expect(ok.verdict == .delivered && ok.messageId == "5fea7756-0ea4-451a-a703-a558b933e274")
    }

    @Test func errorsAreRefusedUnlessThrottledOrServerSide() {
        let missing = answer(400, #"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}"#)
        #expect(missing.verdict == .refused && missing.errorType == "QueueDoesNotExist")
        #expect(missing.summary == "HTTP 400 QueueDoesNotExist: The specified queue does not exist.")
        #expect(answer(400, #"{"__type":"com.amazonaws.sqs#InvalidParameterValue","Message":"bad"}"#).verdict == .refused)
        #expect(answer(403, #"{"__type":"com.amazon.coral.service#AccessDeniedException"}"#).verdict == .refused)
        #expect(answer(400, #"{"__type":"com.amazonaws.sqs#ThrottlingException"}"#).verdict == .retry)
        #expect(answer(400, "", headers: ["x-amzn-query-error": "AWS.SimpleQueueService.RequestThrottled;Sender"]).verdict == .retry)
        #expect(answer(400, "", headers: ["x-amzn-query-error": "AWS.SimpleQueueService.NonExistentQueue;Sender"]).verdict == .refused)
        #expect(answer(429, "").verdict == .retry)
        #expect(answer(503, "<html>").verdict == .retry && answer(500, "{").verdict == .retry)
        #expect(answer(400, "not json").summary == "HTTP 400")
    }

    /// Whatever the body, reading it returns (the fuzz target's property, seeded here).
    @Test func arbitraryBodiesAreRead() {
        var generator = SeededGenerator(seed: 29)
        let base = Array(#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}"#.utf8)
        for _ in 0..<500 {
            var body = base
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                body[Int.random(in: 0..<body.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let read = SQSAnswer(status: 400, headers: [:], body: body)
            #expect(read.verdict != .delivered && (read.errorMessage?.count ?? 0) <= 300)
        }
    }

    @Test func theRequestBodyIsTheJSONProtocolsSendMessage() throws {
        let message = SQSMessage(body: #"{"id":"e1"}"#, attributes: [("type", "TEST"), ("environment", "sandbox")], groupId: "2000", deduplicationId: "e1")
        let json = try JSONValue.parse(message.jsonBody(queueURL: "https://sqs.eu-west-1.amazonaws.com/1/q.fifo"))
        #expect(json["QueueUrl"]?.stringValue == "https://sqs.eu-west-1.amazonaws.com/1/q.fifo")
        #expect(json["MessageBody"]?.stringValue == #"{"id":"e1"}"#)
        #expect(json["MessageAttributes"]?["type"]?["DataType"]?.stringValue == "String")
        #expect(json["MessageAttributes"]?["environment"]?["StringValue"]?.stringValue == "sandbox")
        #expect(json["MessageGroupId"]?.stringValue == "2000" && json["MessageDeduplicationId"]?.stringValue == "e1")
        #expect(SQSMessage.isValidFIFOId(String(repeating: "a", count: 128)) && !SQSMessage.isValidFIFOId(String(repeating: "a", count: 129)))
        #expect(!SQSMessage.isValidFIFOId("has space") && !SQSMessage.isValidFIFOId("") && SQSMessage.isValidFIFOId("a-b_c.d:e"))
    }
}

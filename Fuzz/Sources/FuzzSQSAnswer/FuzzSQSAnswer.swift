import FuzzSupport
import StoreRelayAWS
import StoreRelayNet

/// libFuzzer target for `SQSAnswer`: arbitrary bytes as the body of SQS's answer to a
/// SendMessage (or of anything answering in its place), read with a status chosen from the
/// input's first byte and with and without the query-compatible error header. Checked: no
/// crash or hang; only a 2xx is delivered; 429 and 5xx are always retried; the error message
/// is bounded; the summary is one line, starts with the status and stays short.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSQSAnswer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    let statuses = [200, 400, 403, 404, 413, 429, 500, 503]
    let status = statuses[Int(input.first ?? 0) % statuses.count]
    let body = Array(input.dropFirst())
    let header = String(decoding: body.prefix(80).filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
    for headers in [HTTPHeaders(), HTTPHeaders([("x-amzn-query-error", header)])] {
        let answer = SQSAnswer(status: status, headers: headers, body: body)
        fuzzCheck((answer.verdict == .delivered) == (200..<300).contains(status), "status \(status) read as \(answer.verdict)")
        if status == 429 || status >= 500 { fuzzCheck(answer.verdict == .retry, "status \(status) not retried") }
        fuzzCheck((answer.errorMessage?.count ?? 0) <= 300, "an error message of \(answer.errorMessage?.count ?? 0) characters")
        fuzzCheck(answer.summary.hasPrefix("HTTP \(status)"), "summary \(answer.summary.prefix(80))")
        fuzzCheck(answer.summary.utf8.count <= 2000, "a summary of \(answer.summary.utf8.count) bytes")
    }
    return 0
}

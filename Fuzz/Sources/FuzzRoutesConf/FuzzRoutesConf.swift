import FuzzSupport
import StoreRelayConfig

/// libFuzzer target for the routes.conf parser (`GatewayConfiguration.parseForFuzzing`).
///
/// Any bytes must give a configuration or a list of errors, never a trap or a hang. Errors
/// must be usable by an operator: never an empty list, sorted by line then column (as
/// `ConfigErrors` promises), and each pointing inside the input: a line that exists and a
/// column from 1 to one past its last character (where a missing word would go), or 0:0 for
/// the whole file. A valid configuration must also produce its `storerelay check` report and
/// answer route lookups.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRoutesConf(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    switch GatewayConfiguration.parseForFuzzing(input) {
    case .success(let configuration):
        fuzzCheck(!configuration.checkReport().isEmpty, "empty check report")
        for environment in configuration.environments {
            for type in ["TEST", "DID_RENEW", "REFUND"] {
                for destination in configuration.routes.destinations(
                    environment: environment, bundleId: "com.acme.journal", type: type, subtype: nil) {
                    fuzzCheck(configuration.destinations.contains { $0.name == destination },
                              "a route leads to undeclared destination '\(destination)'")
                }
            }
        }
    case .failure(let failure):
        checkErrors(failure.errors, in: SourceLines(input))
    }
    return 0
}

private func checkErrors(_ errors: [ConfigError], in lines: SourceLines) {
    fuzzCheck(!errors.isEmpty, "parsing failed with an empty error list")
    for (previous, error) in zip(errors, errors.dropFirst()) {
        fuzzCheck((previous.line, previous.column) <= (error.line, error.column),
                  "errors out of order: \(previous) before \(error)")
    }
    for error in errors {
        fuzzCheck(error.file == "fuzz.conf", "error names file '\(error.file)'")
        fuzzCheck(!error.message.isEmpty, "error without a message at \(error.line):\(error.column)")
        if error.line == 0 {
            fuzzCheck(error.column == 0, "whole-file error with column \(error.column): \(error)")
            continue
        }
        guard let length = lines.length(ofLine: error.line) else {
            fuzzCheck(false, "error on line \(error.line) of a \(lines.count)-line input: \(error)")
            continue
        }
        fuzzCheck((1...(length + 1)).contains(error.column),
                  "error at column \(error.column) of line \(error.line), which has \(length) characters: \(error)")
    }
}

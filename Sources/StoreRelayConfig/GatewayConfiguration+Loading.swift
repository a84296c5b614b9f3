import Foundation

/// Reading routes.conf: from a file, from text, from raw bytes.
extension GatewayConfiguration {
    /// Reads and parses the file at `path`. `environment` supplies `${NAME}` values (pass
    /// `ProcessInfo.processInfo.environment` in the server; tests inject their own).
    /// Errors name the file as `path` was given.
    public static func load(path: String, environment: [String: String]) throws(ConfigErrors) -> GatewayConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? error.localizedDescription
            throw ConfigErrors([ConfigError(code: .unreadable, file: path, line: 0, column: 0, message: "cannot read the configuration file: \(reason)")])
        }
        return try parse(bytes: [UInt8](data), fileName: path, environment: environment)
    }

    /// Parses routes.conf text. Every error of the file is reported, in file order.
    public static func parse(text: String, fileName: String = "routes.conf", environment: [String: String] = [:]) throws(ConfigErrors) -> GatewayConfiguration {
        try parse(bytes: Array(text.utf8), fileName: fileName, environment: environment)
    }

    /// Parses routes.conf bytes, which need not be valid UTF-8 (invalid sequences are errors).
    public static func parse(bytes: [UInt8], fileName: String = "routes.conf", environment: [String: String] = [:]) throws(ConfigErrors) -> GatewayConfiguration {
        switch parseResult(bytes, fileName: fileName, environment: environment) {
        case .success(let configuration): return configuration
        case .failure(let errors): throw errors
        }
    }

    /// Entry point for a fuzzer (libFuzzer's `LLVMFuzzerTestOneInput` can call it directly):
    /// any bytes give a configuration or errors, never a trap. A few variables are defined so
    /// that substitution is exercised too.
    public static func parseForFuzzing(_ bytes: [UInt8]) -> Result<GatewayConfiguration, ConfigErrors> {
        parseResult(bytes, fileName: "fuzz.conf", environment: ["A": "a", "SECRET": "whsec_c2VjcmV0", "EMPTY": "", "SPACE": "a b"])
    }

    private static func parseResult(_ bytes: [UInt8], fileName: String, environment: [String: String]) -> Result<GatewayConfiguration, ConfigErrors> {
        var errors: [ConfigError] = []
        let lines = ConfigSource.lines(bytes, file: fileName, errors: &errors)
        let lexer = ConfigLexer(environment: environment, file: fileName)
        var parser = ConfigParser(file: fileName)
        parser.environment = environment
        parser.errors = errors
        for line in lines {
            parser.consume(lexer.tokenize(line, errors: &parser.errors))
        }
        return parser.finish()
    }
}

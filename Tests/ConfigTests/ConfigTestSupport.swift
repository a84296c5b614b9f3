import Foundation
import Testing
@testable import StoreRelayConfig

/// Parses `text`, failing the test with every error if it does not parse.
func parsed(_ text: String, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation) throws -> GatewayConfiguration {
    do {
        return try GatewayConfiguration.parse(text: text, fileName: "routes.conf", environment: environment)
    } catch {
        Issue.record("unexpected errors:\n\(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// The errors of `text`; empty when it parses.
func errors(_ text: String, environment: [String: String] = [:]) -> [ConfigError] {
    do {
        _ = try GatewayConfiguration.parse(text: text, fileName: "routes.conf", environment: environment)
        return []
    } catch {
        return error.errors
    }
}

/// Asserts that `text` gives exactly one error, of `code`, at `line`:`column`; returns it.
@discardableResult
func expectError(
    _ text: String, _ code: ConfigError.Code, line: Int, column: Int, environment: [String: String] = [:],
    containing fragment: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
) -> ConfigError? {
    let found = errors(text, environment: environment)
    #expect(found.count == 1, "expected one error, got:\n\(found.map(\.description).joined(separator: "\n"))", sourceLocation: sourceLocation)
    guard let error = found.first else { return nil }
    #expect(error.code == code, "code \(error.code) in: \(error)", sourceLocation: sourceLocation)
    #expect(error.line == line && error.column == column, "position of: \(error)", sourceLocation: sourceLocation)
    if let fragment {
        #expect(error.message.contains(fragment), "message of: \(error)", sourceLocation: sourceLocation)
    }
    return error
}

/// The package root, from this file's path (Tests/ConfigTests/ConfigTestSupport.swift).
func packageRoot() -> URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// A webhook destination's options, or a test failure.
func webhook(_ configuration: GatewayConfiguration, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> WebhookOptions {
    guard case .webhook(let options)? = configuration.destination(named: name)?.kind else {
        Issue.record("no webhook destination '\(name)'", sourceLocation: sourceLocation)
        throw ConfigErrors([])
    }
    return options
}

/// A file destination's options, or a test failure.
func fileQueue(_ configuration: GatewayConfiguration, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> FileQueueOptions {
    guard case .file(let options)? = configuration.destination(named: name)?.kind else {
        Issue.record("no file destination '\(name)'", sourceLocation: sourceLocation)
        throw ConfigErrors([])
    }
    return options
}

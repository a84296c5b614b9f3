import Testing
@testable import StoreRelayConfig

/// Subjects, routing keys and stream names with placeholders (SPEC "Destinations beyond webhooks").
@Suite struct NameTemplateTests {
    @Test func expandsEachPlaceholderAndKeepsLiterals() throws {
        let template = try NameTemplate(parsing: "appstore.{environment}.{type}/{subtype}:{bundleId}")
        let name = template.expand { "<\($0.rawValue)>" }
        #expect(name == "appstore.<environment>.<type>/<subtype>:<bundleId>")
        #expect(!template.isConstant && template.description == "appstore.{environment}.{type}/{subtype}:{bundleId}")
    }

    @Test func aNameWithoutPlaceholdersIsConstant() throws {
        let template = try NameTemplate(parsing: "appstore:events")
        #expect(template.isConstant && template.expand { _ in "x" } == "appstore:events")
        #expect(try NameTemplate(parsing: "{type}").expand { _ in "REFUND" } == "REFUND")
    }

    @Test(arguments: [
        ("appstore.{enviroment}", "unknown placeholder '{enviroment}'"),
        ("appstore.{type", "'{' is not closed"),
        ("appstore.type}", "'}' without '{'"),
        ("{}", "unknown placeholder '{}'"),
        ("", "the name is empty"),
    ])
    func refusesMalformedTemplates(text: String, message: String) {
        #expect {
            _ = try NameTemplate(parsing: text)
        } throws: { error in
            "\((error as! ConfigValueError).message)".contains(message)
        }
    }
}

import Testing
import StoreRelayVerification

@Suite struct V1SharedSecretTests {
    @Test func matchesAnyConfiguredSecret() {
        #expect(V1SharedSecret.matches(password: "app-secret", secrets: ["primary", "app-secret"]))
        #expect(V1SharedSecret.matches(password: "primary", secrets: ["primary", "app-secret"]))
        #expect(!V1SharedSecret.matches(password: "app-secre", secrets: ["primary", "app-secret"]))
        #expect(!V1SharedSecret.matches(password: "app-secret!", secrets: ["primary", "app-secret"]))
        #expect(!V1SharedSecret.matches(password: "APP-SECRET", secrets: ["app-secret"]))
        #expect(!V1SharedSecret.matches(password: "anything", secrets: []))
        #expect(!V1SharedSecret.matches(password: "", secrets: ["", "x"]))
        #expect(!V1SharedSecret.matches(password: "********", secrets: ["secret"]))
    }
}

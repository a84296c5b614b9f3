public enum BenchKitPlaceholder {}

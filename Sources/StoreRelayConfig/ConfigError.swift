/// One problem found in a configuration file, located at the line and column where it was found.
///
/// Errors are compared on their ``code``; the message is a sentence meant for an operator and
/// may be reworded. The code is a struct over a private enum so new codes can be added without
/// breaking callers that switch on it.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case syntax, undefinedVariable, unknownDirective, unknownOption, duplicate
            case missingArgument, unexpectedArgument, invalidValue, unknownDestination
            case unclosedBlock, strayBrace, invalidBlock, missingArrow, unreadable
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// Broken lexical structure: quotes, escapes, `$`, control characters, invalid UTF-8.
        public static let syntax = Code(.syntax)
        /// `${NAME}` names a variable absent from the environment.
        public static let undefinedVariable = Code(.undefinedVariable)
        /// A top-level directive StoreRelay does not know.
        public static let unknownDirective = Code(.unknownDirective)
        /// An option inside a block that this block does not take.
        public static let unknownOption = Code(.unknownOption)
        /// A single-valued directive or option given twice, or a name declared twice.
        public static let duplicate = Code(.duplicate)
        /// A directive or option without all of its arguments.
        public static let missingArgument = Code(.missingArgument)
        /// A directive or option with more arguments than it takes.
        public static let unexpectedArgument = Code(.unexpectedArgument)
        /// An argument that is not a valid value of its kind (size, duration, URL, address...).
        public static let invalidValue = Code(.invalidValue)
        /// A route naming a destination that is not declared.
        public static let unknownDestination = Code(.unknownDestination)
        /// A block whose closing `}` is missing.
        public static let unclosedBlock = Code(.unclosedBlock)
        /// A `}` with no open block.
        public static let strayBrace = Code(.strayBrace)
        /// A `{` where no block may open.
        public static let invalidBlock = Code(.invalidBlock)
        /// A route line without its `->`.
        public static let missingArrow = Code(.missingArrow)
        /// The file could not be read at all.
        public static let unreadable = Code(.unreadable)

        public var description: String { value.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The file name as given to the parser (for example `routes.conf`).
    public let file: String
    /// 1-based line; 0 when the error concerns the whole file.
    public let line: Int
    /// 1-based column in Unicode scalars; 0 when the error concerns the whole file.
    public let column: Int
    /// One sentence saying what was found and what was expected.
    public let message: String

    public init(code: Code, file: String, line: Int, column: Int, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: message`, the form compilers use so editors can jump to it.
    public var description: String {
        line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)"
    }
}

/// Every error found in one configuration file, in file order.
///
/// The parser does not stop at the first problem: an operator fixing a file wants the whole list.
public struct ConfigErrors: Error, Sendable, Hashable, CustomStringConvertible {
    /// The errors, sorted by line then column; never empty.
    public let errors: [ConfigError]

    public init(_ errors: [ConfigError]) { self.errors = errors }

    /// One error per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

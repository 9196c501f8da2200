//! Errors. Parsing text never fails; these are for bytes that are not UTF-8, calls after
//! [`finish`](crate::StreamParser::finish), and configurations that cannot mean anything.

/// An error from the parser.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A byte chunk held a byte sequence that is not UTF-8.
    #[error("invalid UTF-8 at input byte offset {offset}")]
    InvalidUtf8 {
        /// Offset (from the start of the stream, counting the input of every earlier
        /// `update` and `update_bytes` call) of the first byte of the bad sequence.
        offset: u64,
    },
    /// The input ended in the middle of a UTF-8 sequence.
    #[error("input ends inside a UTF-8 sequence that starts at byte offset {offset}")]
    TruncatedUtf8 {
        /// Offset of the first byte of the unfinished sequence.
        offset: u64,
    },
    /// `update` was called after an invalid UTF-8 error.
    #[error(
        "parser stopped at invalid UTF-8 (input byte offset {offset}); only finish() may follow"
    )]
    Poisoned {
        /// Offset of the invalid byte that stopped the parser.
        offset: u64,
    },
    /// `update` or `finish` was called after `finish`.
    #[error("parser already finished")]
    Finished,
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// An invalid configuration, naming the field and the offending value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A tag name is not a Name (`[A-Za-z][A-Za-z0-9_\-:.]*`).
    #[error(
        "config field `{field}`: `{name}` is not a tag name (expected [A-Za-z][A-Za-z0-9_-:.]*)"
    )]
    InvalidTagName {
        /// The field, e.g. `recognized_tags`.
        field: String,
        /// The offending name.
        name: String,
    },
    /// Two configured names collide (equal up to ASCII case with case-insensitive matching,
    /// or an alias equal to a recognized tag).
    #[error("config field `{field}`: `{name}` conflicts with `{other}`")]
    Conflict {
        /// The field.
        field: String,
        /// The name that conflicts.
        name: String,
        /// The name it conflicts with.
        other: String,
    },
    /// An unknown field in a JSON configuration.
    #[error("config: unknown field `{field}`")]
    UnknownField {
        /// The field path, e.g. `recovery` or `per_tag_recovery.cite.x`.
        field: String,
    },
    /// A field has a value of the wrong kind or out of range.
    #[error("config field `{field}`: {message}")]
    InvalidValue {
        /// The field path.
        field: String,
        /// What was wrong.
        message: String,
    },
    /// The JSON text itself could not be read.
    #[error("config: invalid JSON: {message}")]
    Json {
        /// The JSON parser's message (with line and column).
        message: String,
    },
}

//! Configuration: which tags are recognized and how each one recovers, plus the knobs of
//! SPEC §3–§4, §6 and E1.
//!
//! A [`Config`] is valid by construction: every setter that could make it invalid returns a
//! [`ConfigError`] naming the field, so [`parse`](crate::parse) and
//! [`StreamParser::new`](crate::StreamParser::new) cannot fail on it.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::error::ConfigError;

/// Declares a configuration enum with its configuration names: `as_str`, `Display`,
/// `FromStr` (whose error lists the accepted names) and `ALL`.
macro_rules! config_enum {
    (
        $(#[$meta:meta])*
        $name:ident, $noun:literal {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The configuration name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s).ok_or_else(|| {
                    let names: Vec<&str> = $name::ALL.iter().map(|v| v.as_str()).collect();
                    format!("unknown {} `{s}` (expected one of {})", $noun, names.join(", "))
                })
            }
        }
    };
}

config_enum! {
    /// How a tag closed by recovery (not by its own end tag) chooses the text it annotates.
    Strategy, "strategy" {
        /// `[line start, tag)`, trimmed: the whole line before the tag (postfix tags). Text
        /// annotated earlier on the same line is annotated again.
        RetroLine = "retro_line",
        /// Like `RetroLine`, but starting after the previous `retro_claim` tag's last markup on
        /// the same line, so consecutive postfix citations each claim their own sentence; a tag
        /// with nothing left to claim shares the previous tag's span.
        RetroClaim = "retro_claim",
        /// `[tag, close)`, trimmed: everything up to where the tag was closed.
        ForwardUntilTag = "forward_until_tag",
        /// Like `ForwardUntilTag` but stopping at the first newline.
        ForwardUntilNewline = "forward_until_newline",
        /// The first run of Unicode alphanumerics after the tag.
        ForwardNextToken = "forward_next_token",
        /// Nothing.
        Noop = "noop",
    }
}

config_enum! {
    /// What happens to tags whose name is not recognized.
    UnknownMode, "mode" {
        /// Remove the markup, keep the text around it.
        Strip = "strip",
        /// Keep the markup verbatim as text.
        Passthrough = "passthrough",
        /// Keep the markup verbatim as text (same output as `Passthrough`; kept for kindaxml
        /// compatibility).
        TreatAsText = "treat_as_text",
    }
}

config_enum! {
    /// What happens to an end tag of a recognized name with no open tag to close.
    StrayEndTagPolicy, "policy" {
        /// Remove it.
        Drop = "drop",
        /// Keep it verbatim as text.
        Passthrough = "passthrough",
    }
}

config_enum! {
    /// Which value an attribute given more than once keeps.
    DuplicateAttrs, "policy" {
        /// The last occurrence wins (kindaxml).
        Last = "last",
        /// The first occurrence wins.
        First = "first",
        /// Keep every occurrence (JSON shows an array of the values in source order).
        All = "all",
    }
}

config_enum! {
    /// What a recognized self-closing tag (`<tag/>`) does (E5).
    SelfClosing, "behaviour" {
        /// A zero-width [`Marker`](crate::Marker) at its position (kindaxml).
        Marker = "marker",
        /// Annotates the next run of alphanumerics, like an unclosed tag with
        /// `forward_next_token`.
        NextToken = "next_token",
        /// Annotates up to the end of the line, like an unclosed tag with
        /// `forward_until_newline`.
        UntilNewline = "until_newline",
    }
}

config_enum! {
    /// What `<!-- -->`, `<?…?>` and `<!DOCTYPE …>` become (E6).
    Declarations, "mode" {
        /// Not units: `<!` / `<?` is a literal `<` and what follows is parsed as usual
        /// (kindaxml).
        Text = "text",
        /// Removed whole, tags inside included; one whose terminator does not come within
        /// `max_tag_bytes` is text.
        Drop = "drop",
    }
}

config_enum! {
    /// What a recognized tag whose span turns out empty becomes (an extension).
    EmptyElements, "mode" {
        /// Nothing (SPEC §3: "an empty span produces no annotation").
        Drop = "drop",
        /// A zero-width marker at the tag's position, carrying its annotation: no recognized
        /// tag is lost, e.g. `<keyword term=x>` with a missing closer, or an element holding
        /// only other tags.
        Marker = "marker",
    }
}

/// Whether `name` is a tag Name: `[A-Za-z][A-Za-z0-9_\-:.]*`.
// Bounds: `b[0]` is read after the emptiness check.
#[allow(clippy::indexing_slicing, clippy::string_slice)]
pub fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b[0].is_ascii_alphabetic() && b[1..].iter().all(|&c| is_name_char(c))
}

/// `[A-Za-z0-9_\-:.]`: one table load instead of a chain of range tests (attribute names
/// are scanned byte by byte).
#[inline]
pub(crate) fn is_name_char(c: u8) -> bool {
    // Bounds: 256 entries, indexed by a byte.
    #[allow(clippy::indexing_slicing)]
    NAME_CHAR[usize::from(c)]
}

/// The bytes [`Rules::only_retro_line_starts`] lets through between a tag's name and its
/// `>`: space, tab, and ASCII graphic bytes but quotes, `<`, `>`, `&`, backtick and `/`.
// Bounds: `c < 256` is the loop condition.
#[allow(clippy::indexing_slicing)]
static TAG_ATTR_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        t[c] = matches!(b, b' ' | b'\t')
            || (b.is_ascii_graphic()
                && !matches!(b, b'"' | b'\'' | b'<' | b'>' | b'&' | b'`' | b'/'));
        c += 1;
    }
    t
};

/// Whether [`Rules::only_retro_line_starts`] lets `c` through between a tag's name and its
/// `>`.
#[inline]
fn is_tag_attr_byte(c: u8) -> bool {
    // Bounds: 256 entries, indexed by a byte.
    #[allow(clippy::indexing_slicing)]
    TAG_ATTR_BYTE[usize::from(c)]
}

/// The NameChar rule as a table: the one place it is written (the tokenizer's byte classes
/// are built from it too).
// Bounds: `c < 256` is the loop condition.
#[allow(clippy::indexing_slicing)]
pub(crate) const NAME_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.');
        c += 1;
    }
    t
};

/// Parser configuration.
///
/// Start from [`Config::default()`] (this crate's preset: no silent text loss, postfix
/// citations that claim one sentence each, entities decoded) or [`Config::kindaxml_compat()`]
/// (exactly the defaults of the `kindaxml` 0.1.0 crate), then adjust:
///
/// ```
/// use kindaxml_stream::{Config, Strategy};
/// let config = Config::default()
///     .with_tags(["cite", "note"])?
///     .with_recovery("note", Strategy::ForwardUntilTag)?;
/// assert_eq!(config.strategy_for("note"), Some(Strategy::ForwardUntilTag));
/// assert_eq!(config.strategy_for("cite"), Some(Strategy::RetroClaim));
/// # Ok::<(), kindaxml_stream::ConfigError>(())
/// ```
///
/// A config is compiled (its tag table built) the first time it is used, and keeps that:
/// parsing many short responses, or opening a [`StreamParser`](crate::StreamParser) per
/// stream, with one config compiles it once. Clones share the compiled form; a setter
/// starts over from the changed settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub(crate) recognized_tags: Vec<Arc<str>>,
    pub(crate) per_tag_recovery: Vec<(Arc<str>, Strategy)>,
    pub(crate) default_recovery: Strategy,
    pub(crate) unknown_mode: UnknownMode,
    pub(crate) autoclose_on_any_tag: bool,
    pub(crate) autoclose_on_same_tag: bool,
    pub(crate) trim_punctuation: bool,
    pub(crate) case_sensitive_tags: bool,
    pub(crate) stray_end_tag_policy: StrayEndTagPolicy,
    pub(crate) decode_entities: bool,
    pub(crate) duplicate_attrs: DuplicateAttrs,
    pub(crate) max_tag_bytes: usize,
    pub(crate) max_span_bytes: usize,
    pub(crate) markdown_code: bool,
    pub(crate) raw_tags: Vec<Arc<str>>,
    pub(crate) aliases: Vec<(Arc<str>, Arc<str>)>,
    pub(crate) self_closing: Vec<(Arc<str>, SelfClosing)>,
    pub(crate) declarations: Declarations,
    pub(crate) empty_elements: EmptyElements,
    pub(crate) max_depth: usize,
    /// TagMatcher's leading-block mode: only a raw block at offset 0 is parsed.
    pub(crate) leading_block_only: bool,
    /// The settings above compiled, made on first use (DESIGN.md, decision 35). Every
    /// method that changes a setting empties it (`Config::edited`).
    compiled: CompiledCache,
}

/// Default of [`Config::max_tag_bytes`]: 8 KiB.
pub const DEFAULT_MAX_TAG_BYTES: usize = 8192;
/// Default of [`Config::max_span_bytes`]: 1 MiB.
pub const DEFAULT_MAX_SPAN_BYTES: usize = 1 << 20;
/// Default of [`Config::max_depth`]: 1024 open tags.
pub const DEFAULT_MAX_DEPTH: usize = 1024;

impl Default for Config {
    /// This crate's preset (SPEC §9): kindaxml's defaults, except unknown tags pass through
    /// as text, a same-name reopen is an auto-close (recovered, not explicit), the default
    /// strategy is `retro_claim`, entities are decoded, and markdown code spans and fences
    /// are literal text. No tags are recognized yet.
    fn default() -> Self {
        Config {
            recognized_tags: Vec::new(),
            per_tag_recovery: Vec::new(),
            default_recovery: Strategy::RetroClaim,
            unknown_mode: UnknownMode::Passthrough,
            autoclose_on_any_tag: true,
            autoclose_on_same_tag: false,
            trim_punctuation: true,
            case_sensitive_tags: true,
            stray_end_tag_policy: StrayEndTagPolicy::Drop,
            decode_entities: true,
            duplicate_attrs: DuplicateAttrs::Last,
            max_tag_bytes: DEFAULT_MAX_TAG_BYTES,
            max_span_bytes: DEFAULT_MAX_SPAN_BYTES,
            markdown_code: true,
            raw_tags: Vec::new(),
            aliases: Vec::new(),
            self_closing: Vec::new(),
            declarations: Declarations::Text,
            empty_elements: EmptyElements::Drop,
            max_depth: DEFAULT_MAX_DEPTH,
            leading_block_only: false,
            compiled: CompiledCache::default(),
        }
    }
}

impl Config {
    /// Exactly the defaults of `kindaxml` 0.1.0: unknown tags stripped, same-name reopen
    /// closes explicitly, `retro_line` by default, no entity decoding, no markdown code
    /// protection. No tags recognized yet.
    pub fn kindaxml_compat() -> Self {
        Config {
            unknown_mode: UnknownMode::Strip,
            autoclose_on_same_tag: true,
            default_recovery: Strategy::RetroLine,
            decode_entities: false,
            markdown_code: false,
            ..Config::default()
        }
    }

    /// Replaces the recognized tags. Names are checked; exact repeats are ignored.
    ///
    /// # Errors
    /// [`ConfigError::InvalidTagName`] for a name that is not a Name;
    /// [`ConfigError::Conflict`] for two names equal up to ASCII case while matching is
    /// case-insensitive.
    pub fn with_tags<I, S>(mut self, tags: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.recognized_tags = name_list("recognized_tags", tags)?;
        self.edited();
        self.check_names()?;
        Ok(self)
    }

    /// Adds recognized tags to the ones already configured.
    ///
    /// # Errors
    /// As [`with_tags`](Config::with_tags).
    pub fn add_tags<I, S>(self, tags: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut all: Vec<String> = self.recognized_tags.iter().map(|t| t.to_string()).collect();
        all.extend(tags.into_iter().map(|t| t.as_ref().to_string()));
        self.with_tags(all)
    }

    /// Sets the recovery strategy of one tag (matched like tag names: case-insensitively
    /// when `case_sensitive_tags` is false). A strategy for a tag that is not recognized is
    /// kept but has no effect.
    ///
    /// # Errors
    /// [`ConfigError::InvalidTagName`] if `tag` is not a Name.
    pub fn with_recovery(mut self, tag: &str, strategy: Strategy) -> Result<Self, ConfigError> {
        check_name("per_tag_recovery", tag)?;
        set_keyed(&mut self.per_tag_recovery, tag, strategy);
        self.edited();
        Ok(self)
    }

    /// Sets the strategy of recognized tags that have no per-tag strategy.
    /// Default: `retro_claim` (`retro_line` in the compat preset).
    pub fn with_default_recovery(mut self, strategy: Strategy) -> Self {
        self.default_recovery = strategy;
        self.edited();
        self
    }

    /// What unknown tags become. Default: `passthrough` (`strip` in the compat preset).
    pub fn with_unknown_mode(mut self, mode: UnknownMode) -> Self {
        self.unknown_mode = mode;
        self.edited();
        self
    }

    /// Whether a recognized start or self-closing tag closes every open tag by recovery.
    /// Default: `true` (`false` gives nested mode).
    pub fn with_autoclose_on_any_tag(mut self, on: bool) -> Self {
        self.autoclose_on_any_tag = on;
        self.edited();
        self
    }

    /// Whether a recognized start tag explicitly closes an open tag of the same name.
    /// Default: `false` (`true` in the compat preset).
    pub fn with_autoclose_on_same_tag(mut self, on: bool) -> Self {
        self.autoclose_on_same_tag = on;
        self.edited();
        self
    }

    /// Whether recovered spans lose leading and trailing whitespace and `, . ; : ! ? ( )`.
    /// Default: `true`.
    pub fn with_trim_punctuation(mut self, on: bool) -> Self {
        self.trim_punctuation = on;
        self.edited();
        self
    }

    /// Whether tag names match case-sensitively. Default: `true`.
    ///
    /// # Errors
    /// [`ConfigError::Conflict`] when turning it off while two recognized names differ only
    /// in case.
    pub fn with_case_sensitive_tags(mut self, on: bool) -> Result<Self, ConfigError> {
        self.case_sensitive_tags = on;
        self.edited();
        self.check_names()?;
        Ok(self)
    }

    /// What a recognized end tag with nothing to close becomes. Default: `drop`.
    pub fn with_stray_end_tag_policy(mut self, policy: StrayEndTagPolicy) -> Self {
        self.stray_end_tag_policy = policy;
        self.edited();
        self
    }

    /// Whether `&lt; &gt; &amp; &quot; &apos; &#N; &#xH;` are decoded in text and attribute
    /// values. Default: `true` (`false` in the compat preset).
    pub fn with_decode_entities(mut self, on: bool) -> Self {
        self.decode_entities = on;
        self.edited();
        self
    }

    /// Which value a repeated attribute keeps. Default: `last`.
    pub fn with_duplicate_attrs(mut self, policy: DuplicateAttrs) -> Self {
        self.duplicate_attrs = policy;
        self.edited();
        self
    }

    /// Longest tag candidate, `<` to `>` inclusive, in bytes; a longer one is text.
    /// Default: 8192.
    ///
    /// # Errors
    /// [`ConfigError::InvalidValue`] for 0.
    pub fn with_max_tag_bytes(mut self, n: usize) -> Result<Self, ConfigError> {
        if n == 0 {
            return Err(ConfigError::InvalidValue {
                field: "max_tag_bytes".into(),
                message: "must be at least 1".into(),
            });
        }
        self.max_tag_bytes = n;
        self.edited();
        Ok(self)
    }

    /// Furthest a retro span reaches back from its tag, and largest content of an open tag
    /// before it is closed by recovery, in output bytes. Bounds memory. Default: 1 MiB.
    ///
    /// # Errors
    /// [`ConfigError::InvalidValue`] for 0.
    pub fn with_max_span_bytes(mut self, n: usize) -> Result<Self, ConfigError> {
        if n == 0 {
            return Err(ConfigError::InvalidValue {
                field: "max_span_bytes".into(),
                message: "must be at least 1".into(),
            });
        }
        self.max_span_bytes = n;
        self.edited();
        Ok(self)
    }

    /// Whether markdown code — fenced blocks and inline code spans — is literal text (E2).
    /// Default: `true` (`false` in the compat preset).
    pub fn with_markdown_code(mut self, on: bool) -> Self {
        self.markdown_code = on;
        self.edited();
        self
    }

    /// Replaces the raw tags (E3): their content is literal up to the matching end tag
    /// (same-name nesting deepens), they are never auto-closed by other tags, and they are
    /// recognized even when not in `recognized_tags`. Unclosed at end of input they recover
    /// with their per-tag strategy, by default `forward_until_tag`.
    ///
    /// # Errors
    /// [`ConfigError::InvalidTagName`] for a name that is not a Name.
    pub fn with_raw_tags<I, S>(mut self, tags: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.raw_tags = name_list("raw_tags", tags)?;
        self.edited();
        self.check_names()?;
        Ok(self)
    }

    /// Replaces the aliases (E3): extra names for a tag, e.g. `thinking` → `think`. The
    /// annotation reports the canonical name; an end tag may use any alias of its tag. Alias
    /// targets are recognized even when not in `recognized_tags`.
    ///
    /// # Errors
    /// [`ConfigError::InvalidTagName`] for a name that is not a Name; [`ConfigError::Conflict`]
    /// for an alias equal to a recognized or raw tag, or whose target is itself an alias.
    pub fn with_aliases<I, A, B>(mut self, aliases: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (A, B)>,
        A: AsRef<str>,
        B: AsRef<str>,
    {
        let mut list: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (a, b) in aliases {
            let (a, b) = (a.as_ref(), b.as_ref());
            check_name("aliases", a)?;
            check_name(&format!("aliases.{a}"), b)?;
            set_keyed(&mut list, a, b.into());
        }
        self.aliases = list;
        self.edited();
        self.check_names()?;
        Ok(self)
    }

    /// Sets what a recognized self-closing tag does (E5). Default: `marker`.
    ///
    /// # Errors
    /// [`ConfigError::InvalidTagName`] if `tag` is not a Name.
    pub fn with_self_closing(
        mut self,
        tag: &str,
        behaviour: SelfClosing,
    ) -> Result<Self, ConfigError> {
        check_name("self_closing", tag)?;
        set_keyed(&mut self.self_closing, tag, behaviour);
        self.edited();
        Ok(self)
    }

    /// What declarations become (E6). Default: `text`.
    pub fn with_declarations(mut self, mode: Declarations) -> Self {
        self.declarations = mode;
        self.edited();
        self
    }

    /// What a recognized tag whose span is empty becomes. Default: `drop` (SPEC §3); `marker`
    /// keeps it as a zero-width marker at its position (an extension).
    pub fn with_empty_elements(mut self, mode: EmptyElements) -> Self {
        self.empty_elements = mode;
        self.edited();
        self
    }

    /// See [`with_empty_elements`](Config::with_empty_elements).
    pub fn empty_elements(&self) -> EmptyElements {
        self.empty_elements
    }

    /// Most tags open at once (it matters in nested mode). A recognized start tag that would
    /// open one more is treated as an unrecognized tag (its markup kept or stripped by
    /// `unknown_mode`; its end tag is then stray), so memory stays bounded and the result
    /// deterministic. Default: 1024.
    ///
    /// # Errors
    /// [`ConfigError::InvalidValue`] for 0.
    pub fn with_max_depth(mut self, n: usize) -> Result<Self, ConfigError> {
        if n == 0 {
            return Err(ConfigError::InvalidValue {
                field: "max_depth".into(),
                message: "must be at least 1".into(),
            });
        }
        self.max_depth = n;
        self.edited();
        Ok(self)
    }

    /// See [`with_max_depth`](Config::with_max_depth).
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// Empties the compiled form after a setting changed: every setter calls it.
    fn edited(&mut self) {
        self.compiled = CompiledCache::default();
    }

    /// The compiled form of these settings, compiled on first use and then shared.
    pub(crate) fn rules(&self) -> Arc<Rules> {
        self.compiled
            .0
            .get_or_init(|| Arc::new(Rules::new(self)))
            .clone()
    }

    pub(crate) fn with_leading_block_only(mut self, on: bool) -> Self {
        self.leading_block_only = on;
        self.edited();
        self
    }

    /// See [`with_markdown_code`](Config::with_markdown_code).
    pub fn markdown_code(&self) -> bool {
        self.markdown_code
    }

    /// The raw tag names.
    pub fn raw_tags(&self) -> impl Iterator<Item = &str> {
        self.raw_tags.iter().map(|t| &**t)
    }

    /// The aliases, as `(alias, canonical)`.
    pub fn aliases(&self) -> impl Iterator<Item = (&str, &str)> {
        self.aliases.iter().map(|(a, b)| (&**a, &**b))
    }

    /// See [`with_declarations`](Config::with_declarations).
    pub fn declarations(&self) -> Declarations {
        self.declarations
    }

    /// The recognized tag names, as configured.
    pub fn recognized_tags(&self) -> impl Iterator<Item = &str> {
        self.recognized_tags.iter().map(|t| &**t)
    }

    /// The strategy a recognized tag recovers with, or `None` if `tag` is not recognized.
    // Bounds: `lookup` returns indices into `tags`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub fn strategy_for(&self, tag: &str) -> Option<Strategy> {
        let rules = self.rules();
        rules.lookup(tag).map(|id| rules.tags[id].strategy)
    }

    /// The strategy of tags with no per-tag strategy.
    pub fn default_recovery(&self) -> Strategy {
        self.default_recovery
    }

    /// See [`with_unknown_mode`](Config::with_unknown_mode).
    pub fn unknown_mode(&self) -> UnknownMode {
        self.unknown_mode
    }

    /// See [`with_autoclose_on_any_tag`](Config::with_autoclose_on_any_tag).
    pub fn autoclose_on_any_tag(&self) -> bool {
        self.autoclose_on_any_tag
    }

    /// See [`with_autoclose_on_same_tag`](Config::with_autoclose_on_same_tag).
    pub fn autoclose_on_same_tag(&self) -> bool {
        self.autoclose_on_same_tag
    }

    /// See [`with_trim_punctuation`](Config::with_trim_punctuation).
    pub fn trim_punctuation(&self) -> bool {
        self.trim_punctuation
    }

    /// See [`with_case_sensitive_tags`](Config::with_case_sensitive_tags).
    pub fn case_sensitive_tags(&self) -> bool {
        self.case_sensitive_tags
    }

    /// See [`with_stray_end_tag_policy`](Config::with_stray_end_tag_policy).
    pub fn stray_end_tag_policy(&self) -> StrayEndTagPolicy {
        self.stray_end_tag_policy
    }

    /// See [`with_decode_entities`](Config::with_decode_entities).
    pub fn decode_entities(&self) -> bool {
        self.decode_entities
    }

    /// See [`with_duplicate_attrs`](Config::with_duplicate_attrs).
    pub fn duplicate_attrs(&self) -> DuplicateAttrs {
        self.duplicate_attrs
    }

    /// See [`with_max_tag_bytes`](Config::with_max_tag_bytes).
    pub fn max_tag_bytes(&self) -> usize {
        self.max_tag_bytes
    }

    /// See [`with_max_span_bytes`](Config::with_max_span_bytes).
    pub fn max_span_bytes(&self) -> usize {
        self.max_span_bytes
    }

    fn same_name(&self, a: &str, b: &str) -> bool {
        if self.case_sensitive_tags {
            a == b
        } else {
            a.eq_ignore_ascii_case(b)
        }
    }

    /// Cross-field checks: case collisions, aliases that shadow tags or chain.
    // Bounds: `i` ranges over the same list's indices.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn check_names(&self) -> Result<(), ConfigError> {
        let mut tags: Vec<&Arc<str>> = self.recognized_tags.iter().collect();
        for r in &self.raw_tags {
            if !tags.iter().any(|t| **t == *r) {
                tags.push(r);
            }
        }
        for (i, a) in tags.iter().enumerate() {
            if let Some(b) = tags[..i].iter().find(|b| self.same_name(a, b)) {
                return Err(ConfigError::Conflict {
                    field: "recognized_tags".into(),
                    name: a.to_string(),
                    other: b.to_string(),
                });
            }
        }
        for (i, (alias, target)) in self.aliases.iter().enumerate() {
            if let Some(t) = tags.iter().find(|t| self.same_name(alias, t)) {
                return Err(ConfigError::Conflict {
                    field: format!("aliases.{alias}"),
                    name: alias.to_string(),
                    other: format!("the recognized tag `{t}`"),
                });
            }
            if let Some((other, _)) = self.aliases.iter().find(|(x, _)| self.same_name(x, target)) {
                return Err(ConfigError::Conflict {
                    field: format!("aliases.{alias}"),
                    name: target.to_string(),
                    other: format!("the alias `{other}` (aliases do not chain)"),
                });
            }
            if let Some((other, _)) = self.aliases[..i]
                .iter()
                .find(|(x, _)| self.same_name(x, alias))
            {
                return Err(ConfigError::Conflict {
                    field: "aliases".into(),
                    name: alias.to_string(),
                    other: other.to_string(),
                });
            }
        }
        Ok(())
    }
}

/// Checked names, exact repeats dropped, first occurrence order kept.
fn name_list<I, S>(field: &str, names: I) -> Result<Vec<Arc<str>>, ConfigError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut list: Vec<Arc<str>> = Vec::new();
    for n in names {
        let n = n.as_ref();
        check_name(field, n)?;
        if !list.iter().any(|x| &**x == n) {
            list.push(n.into());
        }
    }
    Ok(list)
}

/// Sets `tag`'s value in a per-tag list (replacing an earlier one).
fn set_keyed<T>(list: &mut Vec<(Arc<str>, T)>, tag: &str, value: T) {
    list.retain(|(t, _)| &**t != tag);
    list.push((tag.into(), value));
}

fn check_name(field: &str, name: &str) -> Result<(), ConfigError> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(ConfigError::InvalidTagName {
            field: field.into(),
            name: name.into(),
        })
    }
}

/// A [`Config`]'s compiled form, made on first use (`Config::rules`) and shared by the
/// config's clones. It is a function of the settings, so it takes no part in comparing
/// configs, and `Debug` only says whether it is there.
#[derive(Clone, Default)]
struct CompiledCache(std::sync::OnceLock<Arc<Rules>>);

impl PartialEq for CompiledCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for CompiledCache {}

impl fmt::Debug for CompiledCache {
    // `Config { …, compiled: true }`: whether it is there, not the tables.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0.get().is_some(), f)
    }
}

/// FxHash-style hasher for short tag names (SipHash's DoS resistance buys nothing for a
/// table built from the configuration).
#[derive(Default, Clone, Copy)]
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Recognized names (aliases included) up to which lookups scan a list instead of hashing.
const SMALL_LOOKUP: usize = 8;

/// The names of a short list ([`SMALL_LOOKUP`]), as `lookup` keys them: those of up to 8
/// bytes packed into a word ([`pack_name`]) with their length, the others as bytes.
#[derive(Debug, Default, Clone)]
struct SmallNames {
    short: Vec<(u64, usize, usize)>,
    long: Vec<(Box<[u8]>, usize)>,
}

/// A name of 1 to 8 bytes as a little-endian word, the bytes past it 0 (with the length,
/// which the word alone does not tell, it is the name).
#[inline(always)]
fn pack_name(b: &[u8]) -> Option<u64> {
    match *b {
        [a] => Some(u64::from(a)),
        [a, c] => Some(u64::from(u16::from_le_bytes([a, c]))),
        [a, c, d] => Some(u64::from(u16::from_le_bytes([a, c])) | u64::from(d) << 16),
        _ => crate::text::word_of(b),
    }
}

/// `w` with every ASCII capital letter lowered (`u8::to_ascii_lowercase` on each byte).
#[inline(always)]
fn lowercase_word(w: u64) -> u64 {
    use crate::text::WORD_HIGH as HIGH;
    const LO: u64 = 0x0101_0101_0101_0101;
    // On the low 7 bits of each byte no sum carries into the next byte: the high bit of
    // `x + (0x80 - c)` tells `x >= c`. Bytes with their own high bit set are not ASCII.
    let low = w & !HIGH;
    let ge_a = low + LO * u64::from(0x80 - b'A');
    let gt_z = low + LO * u64::from(0x80 - b'Z' - 1);
    let upper = ge_a & !gt_z & !w & HIGH;
    w | upper >> 2
}

type NameMap<V> = HashMap<Box<str>, V, std::hash::BuildHasherDefault<NameHasher>>;

/// One recognized tag, compiled.
#[derive(Debug, Clone)]
pub(crate) struct TagRule {
    pub(crate) name: crate::name::TagName,
    pub(crate) strategy: Strategy,
    pub(crate) raw: bool,
    pub(crate) self_closing: SelfClosing,
}

/// A [`Config`] compiled for lookups: shared by every parser made from it.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub(crate) tags: Vec<TagRule>,
    lookup: NameMap<usize>,
    /// The same names (keys as in `lookup`) for a linear scan, when there are few of them:
    /// comparing a handful of short byte strings beats hashing.
    small: Option<SmallNames>,
    /// The byte lengths of the names in `lookup`: bit `min(len, 63)`. Most unrecognized
    /// names (`<b>`, `<br>`, `</p>`…) have a length no recognized one has, and are turned
    /// away by one test instead of a scan or a hash.
    lens: u64,
    pub(crate) case_sensitive: bool,
    pub(crate) unknown_mode: UnknownMode,
    pub(crate) autoclose_on_any_tag: bool,
    pub(crate) autoclose_on_same_tag: bool,
    pub(crate) trim: bool,
    pub(crate) stray: StrayEndTagPolicy,
    pub(crate) decode_entities: bool,
    pub(crate) duplicate_attrs: DuplicateAttrs,
    pub(crate) max_tag_bytes: usize,
    pub(crate) max_span_bytes: usize,
    pub(crate) markdown_code: bool,
    pub(crate) declarations: Declarations,
    pub(crate) empty_markers: bool,
    pub(crate) max_depth: usize,
    pub(crate) leading_block_only: bool,
    /// Names (canonical and aliases, lowercased when matching is case-insensitive) that
    /// count inside raw content, with their tag.
    pub(crate) raw_names: Vec<(Box<[u8]>, usize)>,
    /// Some recognized tag recovers with `retro_line`.
    pub(crate) uses_retro_line: bool,
    /// Some recognized tag recovers with `retro_claim`.
    pub(crate) uses_retro_claim: bool,
    /// The search for the bytes that end a text run (set by `decode_entities` and
    /// `markdown_code`).
    pub(crate) text_search: crate::text::TextSearch,
    /// The search for newlines.
    pub(crate) newline: crate::text::NewlineSearch,
}

impl Rules {
    // Bounds: ids stored in `lookup` are indices pushed into `tags`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn new(c: &Config) -> Rules {
        let key = |s: &str| -> Box<str> {
            if c.case_sensitive_tags {
                s.into()
            } else {
                s.to_ascii_lowercase().into()
            }
        };
        let mut per_tag: HashMap<Box<str>, Strategy> = HashMap::new();
        for (t, s) in &c.per_tag_recovery {
            per_tag.insert(key(t), *s);
        }
        let mut self_closing: HashMap<Box<str>, SelfClosing> = HashMap::new();
        for (t, b) in &c.self_closing {
            self_closing.insert(key(t), *b);
        }
        let mut tags: Vec<TagRule> = Vec::new();
        let mut lookup: NameMap<usize> = NameMap::default();
        let mut add = |name: &Arc<str>, raw: bool, tags: &mut Vec<TagRule>| {
            let k = key(name);
            if let Some(&id) = lookup.get(&k) {
                tags[id].raw |= raw;
                if raw && !per_tag.contains_key(&k) {
                    tags[id].strategy = Strategy::ForwardUntilTag;
                }
                return;
            }
            let default = if raw {
                Strategy::ForwardUntilTag
            } else {
                c.default_recovery
            };
            let strategy = per_tag.get(&k).copied().unwrap_or(default);
            let sc = self_closing.get(&k).copied().unwrap_or(SelfClosing::Marker);
            lookup.insert(k, tags.len());
            tags.push(TagRule {
                name: crate::name::TagName::new(name),
                strategy,
                raw,
                self_closing: sc,
            });
        };
        for t in &c.recognized_tags {
            add(t, false, &mut tags);
        }
        for t in &c.raw_tags {
            add(t, true, &mut tags);
        }
        for (_, target) in &c.aliases {
            add(target, false, &mut tags);
        }
        for (alias, target) in &c.aliases {
            if let Some(&id) = lookup.get(&key(target)) {
                lookup.insert(key(alias), id);
            }
        }
        let mut raw_names: Vec<(Box<[u8]>, usize)> = lookup
            .iter()
            .filter(|(_, &id)| tags[id].raw)
            .map(|(k, &id)| (Box::<[u8]>::from(k.as_bytes()), id))
            .collect();
        raw_names.sort();
        let small = (lookup.len() <= SMALL_LOOKUP).then(|| {
            let mut names = SmallNames::default();
            for (k, &id) in &lookup {
                match pack_name(k.as_bytes()) {
                    Some(w) => names.short.push((w, k.len(), id)),
                    None => names.long.push((Box::<[u8]>::from(k.as_bytes()), id)),
                }
            }
            names
        });
        let lens = lookup.keys().fold(0u64, |m, k| m | 1 << k.len().min(63));
        let uses = |st: Strategy| tags.iter().any(|t| t.strategy == st);
        Rules {
            small,
            lens,
            uses_retro_line: uses(Strategy::RetroLine),
            uses_retro_claim: uses(Strategy::RetroClaim),
            tags,
            lookup,
            case_sensitive: c.case_sensitive_tags,
            unknown_mode: c.unknown_mode,
            autoclose_on_any_tag: c.autoclose_on_any_tag,
            autoclose_on_same_tag: c.autoclose_on_same_tag,
            trim: c.trim_punctuation,
            stray: c.stray_end_tag_policy,
            decode_entities: c.decode_entities,
            duplicate_attrs: c.duplicate_attrs,
            max_tag_bytes: c.max_tag_bytes,
            max_span_bytes: c.max_span_bytes,
            markdown_code: c.markdown_code,
            declarations: c.declarations,
            empty_markers: c.empty_elements == EmptyElements::Marker,
            max_depth: c.max_depth,
            leading_block_only: c.leading_block_only,
            raw_names,
            text_search: crate::text::TextSearch::new(c.decode_entities, c.markdown_code),
            newline: crate::text::NewlineSearch::new(),
        }
    }

    /// The id of a recognized tag named `name` (as written in the input).
    #[inline(never)]
    pub(crate) fn lookup(&self, name: &str) -> Option<usize> {
        self.lookup_short(name.as_bytes())
            .unwrap_or_else(|| self.lookup_long(name))
    }

    /// [`lookup`](Rules::lookup) where it needs no string: a name of a length no
    /// recognized one has, or one of up to 8 bytes in a short list. `None` where the long
    /// lookup must answer.
    #[inline(always)]
    fn lookup_short(&self, n: &[u8]) -> Option<Option<usize>> {
        // (Lowercasing ASCII keeps the length.)
        if self.lens >> n.len().min(63) & 1 == 0 {
            return Some(None);
        }
        // A name of up to 8 bytes in a short list is one word: one compare per configured
        // name (decision 65), where a byte loop took about 70 instructions a lookup.
        // (No packing for a hashed list.)
        let (small, w) = self.small.as_ref().and_then(|s| Some((s, pack_name(n)?)))?;
        let w = if self.case_sensitive {
            w
        } else {
            lowercase_word(w)
        };
        Some(
            small
                .short
                .iter()
                .find(|&&(k, len, _)| k == w && len == n.len())
                .map(|&(_, _, id)| id),
        )
    }

    /// Whether every `<` in `b` (input the tokenizer will read from its text state, no
    /// `&` in it when references are decoded) starts a start tag of a recognized, not raw,
    /// `retro_line` tag, written so that the tokenizer can read it as nothing else: `<`, the
    /// name, then `>` at once or after a space or tab and attribute bytes (ASCII, no quote,
    /// `<`, `&`, backtick, `/` or control byte). Each is then that start tag, or text (an
    /// aborted candidate, one past `max_tag_bytes`, or one inside a code span, a fence or
    /// raw content): no end tag, self-closing tag, marker or other start tag. The held
    /// line's end uses it (`StreamParser::take_line_end`, decision 99).
    pub(crate) fn only_retro_line_starts(&self, b: &[u8]) -> bool {
        let mut at = 0;
        // (The search set up with the config: `<`, and `&` and backticks as configured.)
        while let Some(i) = b.get(at..).and_then(|rest| self.text_search.find(rest)) {
            let lt = at + i;
            match b.get(lt) {
                Some(b'<') => {}
                // (A reference may decode to a newline.)
                Some(b'&') => return false,
                // A backtick: a code span's content is text, or read again as it is.
                _ => {
                    at = lt + 1;
                    continue;
                }
            }
            let mut name_end = lt + 1;
            while b.get(name_end).is_some_and(|&c| is_name_char(c)) {
                name_end += 1;
            }
            let mut gt = name_end;
            while b.get(gt).is_some_and(|&c| is_tag_attr_byte(c)) {
                gt += 1;
            }
            let name = b.get(lt + 1..name_end).unwrap_or_default();
            if b.get(gt) != Some(&b'>')
                || !name.first().is_some_and(u8::is_ascii_alphabetic)
                || !(gt == name_end || matches!(b.get(name_end), Some(b' ' | b'\t')))
                || !self.is_retro_line_name(name)
            {
                return false;
            }
            at = gt + 1;
        }
        true
    }

    /// Whether `name` (name chars) names a recognized, not raw, `retro_line` tag (the
    /// string for the long lookup made only where it is needed).
    fn is_retro_line_name(&self, name: &[u8]) -> bool {
        self.lookup_short(name)
            .unwrap_or_else(|| {
                std::str::from_utf8(name)
                    .ok()
                    .and_then(|n| self.lookup_long(n))
            })
            .and_then(|t| self.tags.get(t))
            .is_some_and(|r| !r.raw && r.strategy == Strategy::RetroLine)
    }

    /// [`lookup`](Rules::lookup) of a name longer than a word, or in a longer list.
    #[inline(never)]
    fn lookup_long(&self, name: &str) -> Option<usize> {
        if let Some(small) = &self.small {
            let n = name.as_bytes();
            return if self.case_sensitive {
                small
                    .long
                    .iter()
                    .find(|(k, _)| **k == *n)
                    .map(|(_, id)| *id)
            } else {
                // Keys are lowercase: equal ignoring ASCII case is equal after lowercasing.
                small
                    .long
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(n))
                    .map(|(_, id)| *id)
            };
        }
        if self.case_sensitive {
            return self.lookup.get(name).copied();
        }
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            let lower = name.to_ascii_lowercase();
            self.lookup.get(lower.as_str()).copied()
        } else {
            self.lookup.get(name).copied()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Setter = (&'static str, fn(Config) -> Config);

    /// Every setter, each changing its setting away from the base config's value.
    const SETTERS: &[Setter] = &[
        ("with_tags", |c| c.with_tags(["todo"]).unwrap()),
        ("add_tags", |c| c.add_tags(["todo"]).unwrap()),
        ("with_recovery", |c| {
            c.with_recovery("cite", Strategy::ForwardUntilTag).unwrap()
        }),
        ("with_default_recovery", |c| {
            c.with_default_recovery(Strategy::RetroLine)
        }),
        ("with_unknown_mode", |c| {
            c.with_unknown_mode(UnknownMode::Strip)
        }),
        ("with_autoclose_on_any_tag", |c| {
            c.with_autoclose_on_any_tag(false)
        }),
        ("with_autoclose_on_same_tag", |c| {
            c.with_autoclose_on_same_tag(true)
        }),
        ("with_trim_punctuation", |c| c.with_trim_punctuation(false)),
        ("with_case_sensitive_tags", |c| {
            c.with_case_sensitive_tags(false).unwrap()
        }),
        ("with_stray_end_tag_policy", |c| {
            c.with_stray_end_tag_policy(StrayEndTagPolicy::Passthrough)
        }),
        ("with_decode_entities", |c| c.with_decode_entities(false)),
        ("with_duplicate_attrs", |c| {
            c.with_duplicate_attrs(DuplicateAttrs::All)
        }),
        ("with_max_tag_bytes", |c| c.with_max_tag_bytes(7).unwrap()),
        ("with_max_span_bytes", |c| c.with_max_span_bytes(7).unwrap()),
        ("with_markdown_code", |c| c.with_markdown_code(false)),
        ("with_raw_tags", |c| c.with_raw_tags(["think"]).unwrap()),
        ("with_aliases", |c| {
            c.with_aliases([("ref", "cite")]).unwrap()
        }),
        ("with_self_closing", |c| {
            c.with_self_closing("cite", SelfClosing::UntilNewline)
                .unwrap()
        }),
        ("with_declarations", |c| {
            c.with_declarations(Declarations::Drop)
        }),
        ("with_empty_elements", |c| {
            c.with_empty_elements(EmptyElements::Marker)
        }),
        ("with_max_depth", |c| c.with_max_depth(3).unwrap()),
        ("with_leading_block_only", |c| {
            c.with_leading_block_only(true)
        }),
    ];

    /// The compiled form is a function of the settings: a setter applied to a config that
    /// was already compiled (its clones share that form) must not leave the old one behind.
    #[test]
    fn every_setter_empties_the_compiled_form() {
        let base = Config::default().with_tags(["cite", "note"]).unwrap();
        let before = base.rules();
        assert!(
            Arc::ptr_eq(&before, &base.clone().rules()),
            "clones share it"
        );
        for (name, set) in SETTERS {
            let changed = set(base.clone());
            assert_ne!(changed, base, "{name}: the setter changes nothing here");
            let after = changed.rules();
            assert!(!Arc::ptr_eq(&before, &after), "{name}: stale compiled form");
            assert_eq!(
                format!("{:?}", *after),
                format!("{:?}", Rules::new(&changed)),
                "{name}"
            );
            assert!(
                Arc::ptr_eq(&after, &changed.rules()),
                "{name}: compiled once"
            );
        }
        // A new setter must join the list above, and call `edited` (all do but `add_tags`,
        // which goes through `with_tags`).
        let src = include_str!("config.rs");
        let src = &src[..src.find("#[cfg(test)]").unwrap()];
        let declared = src.matches(" fn with_").count() + src.matches(" fn add_").count();
        assert_eq!(declared, SETTERS.len());
        assert_eq!(src.matches("self.edited();").count(), SETTERS.len() - 1);
    }

    #[test]
    fn compiling_changes_neither_equality_nor_settings() {
        let a = Config::kindaxml_compat().with_tags(["cite"]).unwrap();
        let b = a.clone();
        let _ = b.rules();
        assert_eq!(a, b);
        assert!(format!("{a:?}").ends_with("compiled: false }"), "{a:?}");
        assert_eq!(
            format!("{a:?}").replace("compiled: false", "compiled: true"),
            format!("{b:?}")
        );
        assert_eq!(b.strategy_for("cite"), Some(Strategy::RetroLine));
    }

    #[test]
    fn packed_names_and_lowercased_words_match_the_bytes() {
        // Every byte at every position of a name of 1 to 8 bytes: packing is the bytes in
        // order, and lowering the word lowers each byte as `u8::to_ascii_lowercase` does.
        for len in 1..=8 {
            for pos in 0..len {
                for b in 0..=255u8 {
                    let mut name = vec![b'Q'; len];
                    name[pos] = b;
                    let w = pack_name(&name).unwrap();
                    let mut bytes = [0u8; 8];
                    bytes[..len].copy_from_slice(&name);
                    assert_eq!(w, u64::from_le_bytes(bytes), "{name:?}");
                    let lower: Vec<u8> = name.iter().map(u8::to_ascii_lowercase).collect();
                    assert_eq!(lowercase_word(w), pack_name(&lower).unwrap(), "{name:?}");
                }
            }
        }
        assert_eq!(pack_name(b""), None);
        assert_eq!(pack_name(b"ninebytes"), None);
    }

    #[test]
    fn lookup_finds_exactly_the_configured_names_whatever_their_length() {
        // Names of many lengths (past the 63 that share the last length bit), aliases and
        // raw tags; few enough for the list scan, then more than it takes (hashed).
        let long = "l".repeat(70);
        let longer = format!("{long}x");
        // (`few` holds names of 1, 4, 8 and 9 bytes: either side of the packed word.)
        let few = ["cite", "n", "todo", "thinking", "reasoning", long.as_str()];
        let many: Vec<String> = (1..=12).map(|k| "m".repeat(k)).collect();
        let queries: Vec<String> = [
            "",
            "c",
            "ci",
            "cite",
            "CITE",
            "Cite",
            "cites",
            "n",
            "N",
            "nn",
            "todo",
            "TODO",
            "think",
            "src",
            "thinking",
            "THINKINg",
            "thinkin",
            "reasoning",
            "ReasoninG",
            "reasonin",
            "m",
            "mmmmmm",
            "mmmmmmmmmmmmm",
            "b",
            "br",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            long.clone(),
            long.to_uppercase(),
            longer.clone(),
            "l".repeat(63),
            "l".repeat(64),
        ])
        .collect();
        for names in [few.iter().map(|s| s.to_string()).collect::<Vec<_>>(), many] {
            for case_sensitive in [true, false] {
                let config = Config::default()
                    .with_tags(&names)
                    .unwrap()
                    .with_raw_tags(["think"])
                    .unwrap()
                    .with_aliases([("src", names[0].as_str())])
                    .unwrap()
                    .with_case_sensitive_tags(case_sensitive)
                    .unwrap();
                let rules = Rules::new(&config);
                let same = |a: &str, b: &str| {
                    if case_sensitive {
                        a == b
                    } else {
                        a.eq_ignore_ascii_case(b)
                    }
                };
                for q in &queries {
                    // The tag a name stands for, by the configuration's own lists.
                    let target = if same(q, "src") {
                        Some(names[0].as_str())
                    } else {
                        names
                            .iter()
                            .map(String::as_str)
                            .chain(["think"])
                            .find(|n| same(q, n))
                    };
                    let got = rules.lookup(q).map(|id| rules.tags[id].name.as_str());
                    assert_eq!(
                        got, target,
                        "{q:?} among {names:?}, case sensitive {case_sensitive}"
                    );
                }
            }
        }
    }

    /// The held line's check (decision 99) lets through exactly the lines whose every `<`
    /// starts a plain start tag of a `retro_line` tag: not an end tag, a self-closing tag,
    /// another tag's start, a raw tag, a declaration, or a candidate the check cannot be
    /// sure of (quotes, `/`, a reference, no `>` yet).
    #[test]
    fn only_retro_line_start_tags_let_a_line_end_join_the_queue() {
        let long = "a_much_longer_citation_name";
        let config = Config::default()
            .with_tags(["cite", "note", long])
            .unwrap()
            .with_recovery("cite", Strategy::RetroLine)
            .unwrap()
            .with_recovery(long, Strategy::RetroLine)
            .unwrap()
            .with_recovery("note", Strategy::RetroClaim)
            .unwrap()
            .with_raw_tags(["think"])
            .unwrap()
            .with_aliases([("ref", "cite")])
            .unwrap()
            .with_markdown_code(true);
        let pass = [
            "",
            "no tags at all, > and ]]> are text",
            "a <cite id=1> b <cite id=2>",
            "<cite>",
            "x <CITE Id=7>",
            "x <ref n=1>",
            "<cite\tid=1 k=v-w.z:q>",
            "code `<cite id=1>` span",
            "<a_much_longer_citation_name id=3>",
            "<A_MUCH_LONGER_CITATION_NAME>",
        ];
        let fail = [
            "</cite>",
            "a <cite id=1> b </cite>",
            "<cite/>",
            "<cite id=1/>",
            "<cite id=\"1\">",
            "<cite id='1'>",
            "<cite src=a/b>",
            "<note>",
            "<think>",
            "<b>",
            "<citex>",
            "<cite-x>",
            "<cite",
            "<cite id=1",
            "a < b",
            "<3",
            "<!-- c -->",
            "<![CDATA[x]]>",
            "<?pi?>",
            "<cite id=&amp;>",
            "x &amp; y",
            "<cite=1>",
            "<cite id=1 <cite>",
            "<cite id=\u{e9}>",
            "<a_much_longer_citation_nam>",
        ];
        for case_sensitive in [false, true] {
            let rules = Rules::new(
                &config
                    .clone()
                    .with_case_sensitive_tags(case_sensitive)
                    .unwrap(),
            );
            for line in pass {
                let upper = line.bytes().any(|c| c.is_ascii_uppercase());
                assert_eq!(
                    rules.only_retro_line_starts(line.as_bytes()),
                    !(case_sensitive && upper),
                    "{line:?}, case sensitive {case_sensitive}"
                );
            }
            for line in fail {
                assert!(
                    !rules.only_retro_line_starts(line.as_bytes()),
                    "{line:?}, case sensitive {case_sensitive}"
                );
                // Anywhere in the line, after tags that pass.
                let later = format!("ok <cite id=1> then {line}");
                assert!(!rules.only_retro_line_starts(later.as_bytes()), "{later:?}");
            }
        }
    }
}

//! [`TagMatcher`]: the XmlMatcher use case — split a stream into the content of `<think>`-like
//! blocks and everything else — in a few lines, over the same streaming machine.

use crate::config::{Config, Strategy, StrayEndTagPolicy, UnknownMode};
use crate::error::{ConfigError, Error};
use crate::output::Event;
use crate::parser::{Events, StreamParser};

/// A piece of the stream: inside a matched block or not. Concatenated, the `data` of every
/// chunk is the input without the matched blocks' own start and end tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchChunk {
    /// Whether this text is inside a matched block.
    pub matched: bool,
    /// The text, byte-exact (no entity decoding, no trimming).
    pub data: String,
}

/// Splits a stream into matched blocks and the rest, emitting each piece as soon as it is
/// final.
///
/// The names are raw tags (SPEC E3): content is literal up to the matching end tag, a nested
/// start tag of the same name deepens, and other tags are left alone. The first name is the
/// tag; the others are its aliases, so `<thinking>…</think>` also closes. Everything outside
/// the blocks is returned byte-exact; markdown code is respected (`` `<think>` `` is text).
///
/// ```
/// use kindaxml_stream::{MatchChunk, TagMatcher};
/// let mut m = TagMatcher::new(["think", "thinking"])?;
/// let mut out = Vec::new();
/// for token in ["<thi", "nk>plan the", " answer</th", "ink>The answer is 4."] {
///     out.extend(m.update(token)?);
/// }
/// out.extend(m.finish()?);
/// let chunk = |matched, data: &str| MatchChunk { matched, data: data.into() };
/// assert_eq!(out, [chunk(true, "plan the"), chunk(true, " answer"), chunk(false, "The answer is 4.")]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TagMatcher {
    parser: StreamParser,
}

impl TagMatcher {
    /// Matches blocks of `names` anywhere in the stream.
    ///
    /// # Errors
    /// [`ConfigError`] if `names` is empty or holds something that is not a tag name.
    pub fn new<I, S>(names: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(TagMatcher {
            parser: StreamParser::new(&Self::config(names, false)?),
        })
    }

    /// Matches only a block that starts the stream at offset 0 (XmlMatcher's `position = 0`):
    /// if the stream does not begin with one of the start tags, or once the leading block has
    /// closed, everything is unmatched text, tags included.
    ///
    /// # Errors
    /// As [`new`](TagMatcher::new).
    pub fn leading<I, S>(names: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Ok(TagMatcher {
            parser: StreamParser::new(&Self::config(names, true)?),
        })
    }

    // Bounds: `names[1..]` follows the non-empty check of `names.first()`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn config<I, S>(names: I, leading: bool) -> Result<Config, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: Vec<String> = names.into_iter().map(|s| s.as_ref().to_string()).collect();
        let Some(first) = names.first() else {
            return Err(ConfigError::InvalidValue {
                field: "names".into(),
                message: "at least one tag name is needed".into(),
            });
        };
        let aliases: Vec<(String, String)> = names[1..]
            .iter()
            .filter(|n| *n != first)
            .map(|n| (n.clone(), first.clone()))
            .collect();
        Ok(Config::default()
            .with_raw_tags([first])?
            .with_recovery(first, Strategy::ForwardUntilTag)?
            .with_aliases(aliases)?
            .with_unknown_mode(UnknownMode::Passthrough)
            .with_stray_end_tag_policy(StrayEndTagPolicy::Passthrough)
            .with_decode_entities(false)
            .with_trim_punctuation(false)
            .with_max_span_bytes(usize::MAX)?
            .with_leading_block_only(leading))
    }

    fn chunks(events: Events<'_>) -> Vec<MatchChunk> {
        let mut out: Vec<MatchChunk> = Vec::new();
        for e in events {
            if let Event::Text(seg) = e {
                let matched = !seg.annotations().is_empty();
                match out.last_mut() {
                    Some(last) if last.matched == matched => last.data.push_str(seg.text()),
                    _ => out.push(MatchChunk {
                        matched,
                        data: seg.into_text(),
                    }),
                }
            }
        }
        out
    }

    /// Feeds text; returns the pieces that became final.
    ///
    /// # Errors
    /// [`Error::Finished`] after [`finish`](TagMatcher::finish).
    pub fn update(&mut self, chunk: &str) -> Result<Vec<MatchChunk>, Error> {
        Ok(Self::chunks(self.parser.update(chunk)?))
    }

    /// Feeds bytes (a UTF-8 character may be split between chunks).
    ///
    /// # Errors
    /// As [`StreamParser::update_bytes`].
    pub fn update_bytes(&mut self, chunk: &[u8]) -> Result<Vec<MatchChunk>, Error> {
        Ok(Self::chunks(self.parser.update_bytes(chunk)?))
    }

    /// Ends the stream: an unclosed block ends here; returns the remaining pieces.
    ///
    /// # Errors
    /// As [`StreamParser::finish`].
    pub fn finish(&mut self) -> Result<Vec<MatchChunk>, Error> {
        Ok(Self::chunks(self.parser.finish()?))
    }
}

//! Streaming parser for the tag-annotated text LLMs emit — KindaXML: `We shipped last week
//! <cite id=1>.`, `<note>…` without a close tag, `<cite id='1, 2>` with a broken quote, bare
//! `&`, stray `</x>` — while the tokens are still arriving.
//!
//! A [`StreamParser`] is a resumable state machine: feed it chunks of any size with
//! [`update`](StreamParser::update) (or byte chunks, split anywhere, with
//! [`update_bytes`](StreamParser::update_bytes)), end with [`finish`](StreamParser::finish).
//! Each call returns the [`Event`]s that became final — annotated text [`Segment`]s and
//! [`Marker`]s — and holds back only what a later byte could still change. The same input
//! always gives the same result, however it was split: [`parse`] is the same machine fed once.
//!
//! # Overview
//!
//! - [`Config`]: recognized tags, per-tag [`Strategy`] for tags that never close, presets
//!   [`Config::default()`] and [`Config::kindaxml_compat()`].
//! - [`StreamParser`]: `update` / `update_bytes` / `finish`, returning [`Events`].
//! - [`parse`]: a whole input to a [`Document`] (canonical: adjacent segments with equal
//!   annotations merged).
//! - [`Annotation`]: tag name, attributes, source offset, and how the tag was closed
//!   ([`Close`]: by its end tag, auto-closed by a later tag, end of input, a limit).
//!
//! # Example: postfix citations, streamed
//!
//! ```
//! use kindaxml_stream::{Config, Document, StreamParser};
//!
//! let config = Config::default().with_tags(["cite"])?;
//! let mut parser = StreamParser::new(&config);
//! let mut doc = Document::new();
//! // Chunks cut through a tag name and an attribute value.
//! for chunk in ["The sky is blue <ci", "te id=1>. Grass is gr", "een <cite id=", "2>."] {
//!     doc.extend(parser.update(chunk)?);
//! }
//! doc.extend(parser.finish()?);
//!
//! assert_eq!(doc.text(), "The sky is blue . Grass is green .");
//! let cited: Vec<(&str, &str)> = doc
//!     .segments()
//!     .iter()
//!     .filter_map(|s| {
//!         let a = s.annotations().first()?;
//!         Some((s.text(), a.attrs().get("id")?.as_str()?))
//!     })
//!     .collect();
//! assert_eq!(cited, [("The sky is blue", "1"), ("Grass is green", "2")]);
//! assert_eq!(doc, kindaxml_stream::parse("The sky is blue <cite id=1>. Grass is green <cite id=2>.", &config));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Streaming from an LLM
//!
//! With the `stream` feature, any `futures::Stream` of tokens — `String`, `&str`, `Bytes`,
//! `Vec<u8>`, or `Result`s of them — becomes a `Stream` of events with
//! `.kindaxml(&config)`. Byte tokens may split a UTF-8 character; an upstream error comes
//! out as an error item after everything before it. With the `tokio` feature,
//! `KindaxmlDecoder` does the same for any `AsyncRead` through
//! `tokio_util::codec::FramedRead`.
//!
//! ```
//! # #[cfg(feature = "stream")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use futures::{executor::block_on, stream, StreamExt};
//! use kindaxml_stream::{Config, Event, KindaxmlStreamExt};
//!
//! let config = Config::default().with_tags(["cite"])?.with_raw_tags(["think"])?;
//! // Tokens as an LLM client would yield them (here: a fixed list).
//! let tokens = stream::iter(["<thi", "nk>Check the data", ".</think>\nRevenue gre", "w 12% <cite id=7>."]);
//! let mut events = tokens.kindaxml(&config);
//! let mut shown = Vec::new();
//! block_on(async {
//!     while let Some(event) = events.next().await {
//!         if let Event::Text(seg) = event? {
//!             let tags: Vec<&str> = seg.annotations().iter().map(|a| a.tag()).collect();
//!             shown.push(format!("{}{:?}", seg.text(), tags)); // render it right away
//!         }
//!     }
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })?;
//! // A line is final at its newline (a later <cite> could still claim it before that).
//! assert_eq!(shown, [
//!     "Check the data.[\"think\"]", "\n[]", "Revenue grew 12%[\"cite\"]", " .[]",
//! ]);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "stream"))]
//! # fn main() {}
//! ```
//!
//! # Crate features
//!
//! - `serde`: JSON configuration (`Config::from_json`) and the JSON output of the `kxml`
//!   tool (`Document::to_json`, `Event::to_json`).
//! - `cli`: the `kxml` command-line tool.
//! - `stream`: the `futures::Stream` adapter (`KindaxmlStreamExt`, `ParseStream`).
//! - `tokio`: the `tokio_util` codec (`KindaxmlDecoder`).

#![forbid(unsafe_code)]
// No panic paths in library code: no unwrap/expect/panic, and every function that indexes
// says why its indices are in bounds (`// Bounds:` on its `allow`).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::todo,
        clippy::unimplemented,
        clippy::unreachable,
        clippy::indexing_slicing,
        clippy::string_slice
    )
)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, rustdoc::broken_intra_doc_links)]
#![warn(missing_debug_implementations, unreachable_pub)]
#![doc(test(attr(deny(warnings))))]

mod attrs;
mod builder;
#[cfg(feature = "tokio")]
mod codec;
mod config;
mod entity;
mod error;
#[cfg(feature = "serde")]
mod json;
mod matcher;
mod name;
mod output;
mod parser;
mod queue;
#[cfg(feature = "stream")]
mod stream;
mod text;
mod tokenizer;
mod utf8;

#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use codec::{DecodeError, KindaxmlDecoder};
pub use config::{
    is_valid_name, Config, Declarations, DuplicateAttrs, EmptyElements, SelfClosing, Strategy,
    StrayEndTagPolicy, UnknownMode, DEFAULT_MAX_DEPTH, DEFAULT_MAX_SPAN_BYTES,
    DEFAULT_MAX_TAG_BYTES,
};
pub use error::{ConfigError, Error};
pub use matcher::{MatchChunk, TagMatcher};
pub use output::{
    Annotation, Annotations, AttrStr, AttrValue, Attrs, Close, Document, Event, Marker, Segment,
};
pub use parser::{parse, parse_bytes, CompiledConfig, Events, StreamParser};
#[cfg(feature = "stream")]
#[cfg_attr(docsrs, doc(cfg(feature = "stream")))]
pub use stream::{Chunk, Input, KindaxmlStreamExt, ParseStream, StreamError, StreamItem};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

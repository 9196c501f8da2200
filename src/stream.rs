//! Async adapter (feature `stream`): a [`futures_core::Stream`] of text or byte chunks — LLM
//! tokens — in, a `Stream` of parser [`Event`]s out. It only drives
//! [`StreamParser::update`] / [`finish`](StreamParser::finish); there is no second copy of
//! any parsing logic.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;

use crate::config::Config;
use crate::error::Error;
use crate::output::Event;
use crate::parser::StreamParser;

/// One input chunk: text, or bytes that may split a UTF-8 character.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Text.
    Text(&'a str),
    /// Bytes (a character may be split between chunks).
    Bytes(&'a [u8]),
}

/// A type that can be fed to the parser as one chunk.
pub trait Chunk {
    /// The chunk's content.
    fn input(&self) -> Input<'_>;
}

macro_rules! text_chunk {
    ($($t:ty),*) => {$(
        impl Chunk for $t {
            fn input(&self) -> Input<'_> {
                Input::Text(self)
            }
        }
    )*};
}
text_chunk!(
    String,
    &str,
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'_, str>
);

macro_rules! byte_chunk {
    ($($t:ty),*) => {$(
        impl Chunk for $t {
            fn input(&self) -> Input<'_> {
                Input::Bytes(self)
            }
        }
    )*};
}
byte_chunk!(Vec<u8>, &[u8], Box<[u8]>, bytes::Bytes, bytes::BytesMut);

/// A stream item: a chunk, or a `Result` of a chunk and an upstream error.
pub trait StreamItem {
    /// The chunk type.
    type Chunk: Chunk;
    /// The upstream error (`Infallible` for plain chunks).
    type Error;
    /// The chunk, or the upstream error.
    fn into_chunk(self) -> Result<Self::Chunk, Self::Error>;
}

impl<C: Chunk> StreamItem for C {
    type Chunk = C;
    type Error = Infallible;
    fn into_chunk(self) -> Result<C, Infallible> {
        Ok(self)
    }
}

impl<C: Chunk, E> StreamItem for Result<C, E> {
    type Chunk = C;
    type Error = E;
    fn into_chunk(self) -> Result<C, E> {
        self
    }
}

/// An error item of a [`ParseStream`].
#[derive(Debug, thiserror::Error)]
pub enum StreamError<E> {
    /// The upstream stream yielded an error. Everything before it was parsed and yielded.
    #[error("upstream error: {0}")]
    Source(#[source] E),
    /// The parser rejected the input (invalid UTF-8 in a byte chunk).
    #[error(transparent)]
    Parse(Error),
}

impl<E: PartialEq> PartialEq for StreamError<E> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (StreamError::Source(a), StreamError::Source(b)) => a == b,
            (StreamError::Parse(a), StreamError::Parse(b)) => a == b,
            _ => false,
        }
    }
}

pin_project_lite::pin_project! {
    /// A `Stream` of parser events over a `Stream` of chunks; see [`KindaxmlStreamExt`].
    ///
    /// Each upstream item is fed to a [`StreamParser`] and the events it made final are
    /// yielded one by one; at most one item's events are buffered (backpressure is the
    /// consumer's polling). When the upstream ends, the parser finishes and the remaining
    /// events are yielded. An upstream error or invalid UTF-8 ends the input there: the
    /// parser finishes (nothing before the error is lost), its events are yielded, then the
    /// error, then the stream ends.
    ///
    /// # Cancellation safety
    ///
    /// Dropping the stream (e.g. when a `select!` branch loses) drops the parser and the
    /// upstream; nothing runs in the background. Polling it again after a `Pending` resumes
    /// where it stopped: no event is lost or repeated.
    pub struct ParseStream<S, E> {
        #[pin]
        upstream: S,
        parser: StreamParser,
        queue: VecDeque<Event>,
        error: Option<StreamError<E>>,
        upstream_done: bool,
        finished: bool,
    }
}

impl<S: fmt::Debug, E> fmt::Debug for ParseStream<S, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParseStream")
            .field("upstream", &self.upstream)
            .field("parser", &self.parser)
            .field("queued", &self.queue.len())
            .field("finished", &self.finished)
            .finish()
    }
}

impl<S, E> ParseStream<S, E> {
    /// Wraps `upstream`, parsing with `config`.
    pub fn new(upstream: S, config: &Config) -> Self {
        ParseStream::with_parser(upstream, StreamParser::new(config))
    }

    /// Wraps `upstream`, feeding `parser` (e.g. one made with lossy UTF-8).
    pub fn with_parser(upstream: S, parser: StreamParser) -> Self {
        ParseStream {
            upstream,
            parser,
            queue: VecDeque::new(),
            error: None,
            upstream_done: false,
            finished: false,
        }
    }
}

impl<S, I> Stream for ParseStream<S, I::Error>
where
    S: Stream<Item = I>,
    I: StreamItem,
{
    type Item = Result<Event, StreamError<I::Error>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            if let Some(e) = this.queue.pop_front() {
                return Poll::Ready(Some(Ok(e)));
            }
            if *this.finished {
                return Poll::Ready(this.error.take().map(Err));
            }
            if *this.upstream_done {
                // End of input, or an error that ends it: flush everything first.
                *this.finished = true;
                let err = match this.parser.finish() {
                    Ok(events) => {
                        this.queue.extend(events);
                        None
                    }
                    Err(e) => Some(e),
                };
                if let Some(e) = err {
                    // A truncated UTF-8 sequence, or a bad byte that waited unparsed in
                    // the queue (decision 68): the parser is poisoned there, and a second
                    // finish ends the input before it.
                    if this.error.is_none() {
                        *this.error = Some(StreamError::Parse(e));
                    }
                    if let Ok(events) = this.parser.finish() {
                        this.queue.extend(events);
                    }
                }
                continue;
            }
            match this.upstream.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => *this.upstream_done = true,
                Poll::Ready(Some(item)) => match item.into_chunk() {
                    Err(e) => {
                        *this.error = Some(StreamError::Source(e));
                        *this.upstream_done = true;
                    }
                    Ok(chunk) => {
                        let r = match chunk.input() {
                            Input::Text(t) => this.parser.update(t),
                            Input::Bytes(b) => this.parser.update_bytes(b),
                        };
                        let err = match r {
                            Ok(events) => {
                                this.queue.extend(events);
                                None
                            }
                            Err(e) => Some(e),
                        };
                        if let Some(e) = err {
                            *this.error = Some(StreamError::Parse(e));
                            *this.upstream_done = true;
                        }
                    }
                },
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.queue.len(), None)
    }
}

/// `stream.kindaxml(&config)`: parse a stream of LLM tokens.
///
/// Items may be text (`String`, `&str`, …), bytes (`Vec<u8>`, `Bytes`, …; a character may be
/// split between items) or a `Result` of either (an upstream error becomes an error item).
///
/// ```
/// use futures::{executor::block_on, stream, StreamExt};
/// use kindaxml_stream::{Config, Document, KindaxmlStreamExt};
///
/// let config = Config::default().with_tags(["cite"])?;
/// let tokens = stream::iter(["The sky is bl", "ue <ci", "te id=1>."]);
/// let events: Vec<_> = block_on(tokens.kindaxml(&config).collect());
/// let doc: Document = events.into_iter().map(Result::unwrap).collect();
/// assert_eq!(doc.segments()[0].text(), "The sky is blue");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait KindaxmlStreamExt: Stream + Sized
where
    Self::Item: StreamItem,
{
    /// Parses this stream with `config`.
    fn kindaxml(self, config: &Config) -> ParseStream<Self, <Self::Item as StreamItem>::Error> {
        ParseStream::new(self, config)
    }
}

impl<S> KindaxmlStreamExt for S
where
    S: Stream,
    S::Item: StreamItem,
{
}

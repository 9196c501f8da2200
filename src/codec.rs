//! A `tokio_util::codec::Decoder` (feature `tokio`): `FramedRead::new(reader, decoder)` turns
//! any `AsyncRead` — a socket, a child process's stdout, an HTTP body reader — into a stream
//! of parser [`Event`]s. It only drives [`StreamParser`].

use std::collections::VecDeque;

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use crate::config::Config;
use crate::error::Error;
use crate::output::Event;
use crate::parser::StreamParser;

/// An error from [`KindaxmlDecoder`]: reading failed, or the bytes are not UTF-8.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The reader failed.
    #[error("read error: {0}")]
    Io(#[from] std::io::Error),
    /// The parser rejected the input.
    #[error(transparent)]
    Parse(#[from] Error),
}

/// Decodes a byte stream into parser events.
///
/// Every call consumes all buffered bytes (a UTF-8 character split between reads waits in
/// the parser, not in the buffer) and yields the events that became final, one per call.
/// At the end of the input the parser finishes and the remaining events follow.
///
/// ```no_run
/// # #[allow(dead_code)]
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use futures::StreamExt;
/// use kindaxml_stream::{Config, KindaxmlDecoder};
/// use tokio_util::codec::FramedRead;
///
/// let child = tokio::process::Command::new("my-llm")
///     .stdout(std::process::Stdio::piped())
///     .spawn()?;
/// let config = Config::default().with_tags(["cite"])?;
/// let mut events = FramedRead::new(child.stdout.unwrap(), KindaxmlDecoder::new(&config));
/// while let Some(event) = events.next().await {
///     println!("{:?}", event?);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct KindaxmlDecoder {
    parser: StreamParser,
    queue: VecDeque<Event>,
    /// Returned once the events before it are out.
    error: Option<Error>,
    finished: bool,
}

impl KindaxmlDecoder {
    /// A decoder parsing with `config`.
    pub fn new(config: &Config) -> Self {
        KindaxmlDecoder::with_parser(StreamParser::new(config))
    }

    /// A decoder feeding `parser`.
    pub fn with_parser(parser: StreamParser) -> Self {
        KindaxmlDecoder {
            parser,
            queue: VecDeque::new(),
            error: None,
            finished: false,
        }
    }
}

impl Decoder for KindaxmlDecoder {
    type Item = Event;
    type Error = DecodeError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Event>, DecodeError> {
        if self.queue.is_empty() && !src.is_empty() && !self.finished {
            let chunk = src.split();
            let err = match self.parser.update_bytes(&chunk) {
                Ok(events) => {
                    self.queue.extend(events);
                    None
                }
                Err(e) => Some(e),
            };
            if let Some(e) = err {
                // Invalid UTF-8 ends the input there; what came before is not lost.
                self.finished = true;
                self.error = Some(e);
                if let Ok(events) = self.parser.finish() {
                    self.queue.extend(events);
                }
            }
        }
        if let Some(e) = self.queue.pop_front() {
            return Ok(Some(e));
        }
        match self.error.take() {
            Some(e) => Err(e.into()),
            None => Ok(None),
        }
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Event>, DecodeError> {
        if let Some(e) = self.decode(src)? {
            return Ok(Some(e));
        }
        if !self.finished {
            self.finished = true;
            let err = match self.parser.finish() {
                Ok(events) => {
                    self.queue.extend(events);
                    None
                }
                Err(e) => Some(e),
            };
            if let Some(e) = err {
                // A character cut off by the end of input, or a bad byte that waited in
                // the queue (decision 68): what came before is kept.
                if let Ok(events) = self.parser.finish() {
                    self.queue.extend(events);
                }
                self.error = Some(e);
            }
        }
        if let Some(e) = self.queue.pop_front() {
            return Ok(Some(e));
        }
        match self.error.take() {
            Some(e) => Err(e.into()),
            None => Ok(None),
        }
    }
}

impl KindaxmlDecoder {
    /// A decoder for `config`, replacing invalid UTF-8 with U+FFFD instead of failing.
    pub fn lossy(config: &Config) -> Self {
        KindaxmlDecoder::with_parser(StreamParser::new(config).with_lossy_utf8(true))
    }
}

impl From<DecodeError> for std::io::Error {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Io(e) => e,
            DecodeError::Parse(e) => std::io::Error::new(std::io::ErrorKind::InvalidData, e),
        }
    }
}

//! [`StreamParser`]: the UTF-8 layer, the tokenizer and the builder driven together, and
//! [`parse`], which is the same machine fed once.

use std::sync::Arc;

use crate::builder::Builder;
use crate::config::{Config, Rules};
use crate::error::Error;
use crate::output::{Document, Event};
use crate::tokenizer::Tokenizer;
use crate::utf8::Utf8Decoder;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    Running,
    /// Stopped at invalid UTF-8 at this input offset; only `finish` may follow.
    Poisoned(u64),
    Finished,
}

/// The streaming parser: feed chunks with [`update`](StreamParser::update) or
/// [`update_bytes`](StreamParser::update_bytes), end with [`finish`](StreamParser::finish).
///
/// Each call returns the [`Event`]s that became final with it. Concatenated and merged
/// ([`Document::from_events`]) they equal [`parse`] of the whole input, however the input was
/// split. An update holds back only what a later byte could still change (SPEC §6): an
/// unfinished tag, reference or delimiter at the end, the current line while a postfix
/// (`retro_*`) tag could still annotate it, and the content of an open tag whose span depends
/// on how it will close. Held output is bounded by `max_span_bytes`, an unfinished construct
/// by `max_tag_bytes`.
///
/// # Example
///
/// ```
/// use kindaxml_stream::{Config, Event, StreamParser, Strategy};
///
/// let config = Config::default()
///     .with_tags(["note"])?
///     .with_recovery("note", Strategy::ForwardUntilTag)?;
/// let mut parser = StreamParser::new(&config);
/// let mut texts = Vec::new();
/// // The tag is cut in the middle of its name.
/// for chunk in ["Intro. <no", "te>Check the", " logs</note> done"] {
///     for event in parser.update(chunk)? {
///         if let Event::Text(seg) = event {
///             let tags: Vec<_> = seg.annotations().iter().map(|a| a.tag().to_string()).collect();
///             texts.push((seg.text().to_string(), tags));
///         }
///     }
/// }
/// for event in parser.finish()? {
///     if let Event::Text(seg) = event {
///         texts.push((seg.text().to_string(), vec![]));
///     }
/// }
/// assert_eq!(texts, [
///     ("Intro. ".to_string(), vec![]),
///     ("Check the".to_string(), vec!["note".to_string()]),
///     (" logs".to_string(), vec!["note".to_string()]),
///     (" done".to_string(), vec![]),
/// ]);
/// # Ok::<(), kindaxml_stream::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamParser {
    rules: Arc<Rules>,
    tokenizer: Tokenizer,
    builder: Builder,
    utf8: Utf8Decoder,
    /// Source offset of the next decoded byte.
    src: usize,
    life: Life,
    /// Plain text bytes that may go straight to the builder with no flush (see
    /// `Builder::plain_budget`); 0 unless running with no partial character, and 0 while
    /// the queue may take chunks (`queue_room > 0`: decision 70).
    plain_budget: usize,
    /// The same budget whether or not a partial character waits (`plain_budget` is 0 then,
    /// so that the ASCII path does not run): byte chunks that complete one or end inside
    /// one take it (`take_plain_unicode`).
    text_budget: usize,
    /// Input taken by [`take_queued`](StreamParser::take_queued) and not yet fed to the
    /// tokenizer, at most `QUEUE_MAX` bytes: text chunks and byte chunks, not yet validated
    /// (byte chunks may split characters, and may not be UTF-8 at all: decision 68).
    queue: crate::queue::Queue,
    /// How many more bytes `take_queued` may take: at most `QUEUE_MAX`, and the room the
    /// last flush found (`Builder::line_pin_room`, else `Builder::plain_budget`) less what
    /// was taken since; 0 while anything else has changed the machine since that flush.
    /// While it is not 0, the plain budgets are (decision 70).
    queue_room: usize,
    /// The `text::STOP_*` bits that keep a chunk out of the queue, as the last flush found
    /// them. Read only while `queue_room > 0`; every flush sets it afresh.
    queue_stop: u8,
    /// `queue_stop`'s word test (`text::word_stop_words`), set with it.
    queue_xor: u64,
    queue_keep: u64,
    /// Whether the last flush left the machine where a chunk of plain text is final as soon
    /// as it arrives, but for a trailing run that trimming might cut off
    /// (`Builder::direct_ready`): such a chunk takes
    /// [`take_direct`](StreamParser::take_direct). Cleared by every update that does not,
    /// and set afresh by every flush.
    direct: bool,
    /// Whether chunks may be queued at all, and take the direct path (tests turn it off to
    /// reach the other paths).
    queue_on: bool,
    /// Whether the last flush held the line whole with a tag open: the chunk that ends the
    /// line may then join the queue, if a `retro_*` tag pins the frontier
    /// ([`take_line_end`](StreamParser::take_line_end), decision 99). Read only while
    /// `queue_room > 0`; every flush sets it afresh.
    line_join: bool,
    /// Chunks the split-character short path took (for tests).
    #[cfg(test)]
    split_taken: usize,
    /// Chunks the inside-a-tag short path took (for tests).
    #[cfg(test)]
    tag_taken: usize,
    /// Chunks that ended inside a character and were fed with the queue (for tests).
    #[cfg(test)]
    split_joined: usize,
    /// Chunks the tag-opening short path took (for tests).
    #[cfg(test)]
    open_taken: usize,
    /// Chunks the direct path took (for tests).
    #[cfg(test)]
    direct_taken: usize,
    /// Line ends that joined the queue (for tests).
    #[cfg(test)]
    line_joined: usize,
}

/// What [`StreamParser::feed_plain`] did with a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plain {
    /// Fed it to the builder.
    Fed,
    /// Nothing: it is not plain text, or the tokenizer is not where plain text passes.
    Not,
    /// Nothing yet: plain text with non-ASCII characters, which needs it as `&str`.
    NeedText,
    /// Took it as the opening of a tag ([`StreamParser::take_open`]): nothing to flush.
    Opened,
}

/// Input slice after which a large chunk's final output is emitted (see `feed_str`).
const FEED_SLICE: usize = 64 << 10;

/// The output buffer's first capacity, taken by a stream's first update that reaches the
/// machine: room for the text of a short answer (decision 62).
const HELD_FIRST: usize = 1024;

/// Most input bytes [`StreamParser::take_queued`] holds before a chunk goes through the
/// machine anyway: a line longer than this is parsed in pieces of about this size, and the
/// queue's buffer (kept between lines) stays small.
const QUEUE_MAX: usize = 4 << 10;

/// The queue's first capacity, taken when a line may first wait: room for a typical line of
/// an LLM answer (decision 49).
const QUEUE_FIRST: usize = 512;

/// Longest chunk [`StreamParser::feed_queue_and`] appends to the queue to feed both at once.
const QUEUE_JOIN_MAX: usize = 64;

/// Longest chunk [`StreamParser::take_plain`] and [`StreamParser::feed_plain`] take (longer
/// ones are faster through the tokenizer's `memchr` search and bulk copy).
const PLAIN_MAX: usize = 32;

/// Longest chunk the fast path inside a tag candidate tries (`Tokenizer::take_tag_chunk`):
/// a longer one most often holds the tag's `>`, and the full path's cost is spread over it.
const TAG_CHUNK_MAX: usize = 32;

/// The events one call made final. Dropping it unconsumed discards them.
#[derive(Debug)]
pub struct Events<'a>(Option<std::vec::Drain<'a, Event>>);

impl<'a> Events<'a> {
    /// Drains `events` (most updates of a token stream emit nothing: no drain to set up).
    #[inline]
    fn of(events: &'a mut Vec<Event>) -> Self {
        Events((!events.is_empty()).then(|| events.drain(..)))
    }
}

impl Iterator for Events<'_> {
    type Item = Event;
    #[inline]
    fn next(&mut self) -> Option<Event> {
        self.0.as_mut()?.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.as_ref().map_or((0, Some(0)), Iterator::size_hint)
    }
    // The consuming adapters go straight to the drain (most updates emit nothing, and then
    // they return at once).
    #[inline]
    fn count(self) -> usize {
        // Dropping the drain drops the events it still holds.
        self.0.map_or(0, |d| d.len())
    }
    #[inline]
    fn fold<B, F: FnMut(B, Event) -> B>(self, init: B, f: F) -> B {
        match self.0 {
            Some(d) => d.fold(init, f),
            None => init,
        }
    }
}

impl ExactSizeIterator for Events<'_> {}
impl DoubleEndedIterator for Events<'_> {
    fn next_back(&mut self) -> Option<Event> {
        self.0.as_mut()?.next_back()
    }
}
impl std::iter::FusedIterator for Events<'_> {}

/// A [`Config`] compiled once and shared by many parsers (cheap to clone): a server holding
/// many concurrent streams builds the tag table once. (A `Config` keeps its own compiled
/// form too, so [`StreamParser::new`] with one config compiles once as well; this is that
/// form without the settings.)
///
/// ```
/// use kindaxml_stream::{Config, StreamParser};
/// let compiled = Config::default().with_tags(["cite"])?.compile();
/// let parsers: Vec<StreamParser> = (0..3).map(|_| StreamParser::from_compiled(&compiled)).collect();
/// assert_eq!(parsers.len(), 3);
/// # Ok::<(), kindaxml_stream::ConfigError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CompiledConfig(Arc<Rules>);

impl Config {
    /// This configuration compiled, for [`StreamParser::from_compiled`] (compiled on the
    /// first use, then shared).
    pub fn compile(&self) -> CompiledConfig {
        CompiledConfig(self.rules())
    }
}

impl CompiledConfig {
    /// A copy of this compiled configuration in allocations of its own, for the parsers
    /// of another thread.
    ///
    /// Tag names are interned for the process, and an annotation holds an interned name
    /// with no reference count, so parsers on several threads sharing one configuration
    /// do not write its names' counts for every tag. Only names past the interning limits
    /// (longer than 64 bytes, or compiled after 1,024 distinct names have been interned)
    /// are held by reference count: each tag a parser opens raises its name's count and
    /// each annotation dropped lowers it, and parsers on different cores sharing such a
    /// name write the same cache line for every tag. This copy gives those names
    /// allocations of their own, made on the thread that calls it, so that its parsers
    /// write only their own. It parses exactly as `self` does. `kxml`'s parallel count
    /// makes one on every thread (DESIGN.md, decisions 108 and 117).
    ///
    /// ```
    /// use kindaxml_stream::{parse, Config, StreamParser};
    /// let config = Config::default().with_tags(["cite"])?;
    /// let shared = config.compile();
    /// let doc = std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let own = shared.unshared();
    ///         let mut p = StreamParser::from_compiled(&own);
    ///         let mut events: Vec<_> = p.update("Grass is green <cite id=2>.").unwrap().collect();
    ///         events.extend(p.finish().unwrap());
    ///         kindaxml_stream::Document::from_events(events)
    ///     })
    ///     .join()
    ///     .unwrap()
    /// });
    /// assert_eq!(doc, parse("Grass is green <cite id=2>.", &config));
    /// # Ok::<(), kindaxml_stream::ConfigError>(())
    /// ```
    pub fn unshared(&self) -> CompiledConfig {
        let mut rules = Rules::clone(&self.0);
        for tag in &mut rules.tags {
            tag.name = tag.name.unshared();
        }
        CompiledConfig(Arc::new(rules))
    }
}

impl StreamParser {
    /// A parser for `config` (compiled on its first use, then shared: DESIGN.md, decision
    /// 35).
    pub fn new(config: &Config) -> Self {
        StreamParser::with_rules(config.rules())
    }

    /// A parser sharing a compiled configuration.
    pub fn from_compiled(compiled: &CompiledConfig) -> Self {
        StreamParser::with_rules(compiled.0.clone())
    }

    fn with_rules(rules: Arc<Rules>) -> Self {
        StreamParser {
            tokenizer: Tokenizer::new(&rules),
            builder: Builder::new(rules.clone()),
            rules,
            utf8: Utf8Decoder::default(),
            src: 0,
            life: Life::Running,
            plain_budget: 0,
            text_budget: 0,
            queue: crate::queue::Queue::default(),
            queue_room: 0,
            queue_stop: 0,
            queue_xor: 0,
            queue_keep: 0,
            direct: false,
            queue_on: true,
            line_join: false,
            #[cfg(test)]
            split_taken: 0,
            #[cfg(test)]
            tag_taken: 0,
            #[cfg(test)]
            split_joined: 0,
            #[cfg(test)]
            open_taken: 0,
            #[cfg(test)]
            direct_taken: 0,
            #[cfg(test)]
            line_joined: 0,
        }
    }

    /// Replace invalid UTF-8 in byte chunks with U+FFFD (as `String::from_utf8_lossy`)
    /// instead of failing. Source offsets then count bytes of the decoded text.
    pub fn with_lossy_utf8(mut self, lossy: bool) -> Self {
        self.utf8.lossy = lossy;
        self
    }

    fn check_running(&self) -> Result<(), Error> {
        match self.life {
            Life::Running => Ok(()),
            Life::Poisoned(offset) => Err(Error::Poisoned { offset }),
            Life::Finished => Err(Error::Finished),
        }
    }

    /// The fastest path (DESIGN.md, decision 48): while the last flush found the tokenizer
    /// in its text state and no chunk without a stop byte (`queue_stop`) able to make
    /// anything final, such a chunk is queued, unparsed, and the flush, which would emit
    /// nothing, is skipped. Three regimes set the stop bytes. While the line is held whole
    /// (`Builder::line_pin_room`), only a newline can end the hold (or an `&` when
    /// references are decoded: one may decode to a newline), so whole tags wait too.
    /// Otherwise the plain budget (`Builder::plain_budget`) shows that text cannot move the
    /// frontier, and a chunk with no newline, `>` or `&` could only become text without a
    /// newline (an unfinished tag, CDATA, declaration or code span, text, or a candidate
    /// that aborts into text); and while an open `retro_*` tag pins the frontier
    /// (`Builder::retro_pins`), only a tag's end can move it, so newlines and references
    /// wait too (decision 95). The newline that ends a held line joins the queue too when
    /// the line's tags are all `retro_line` start tags and one of them pins the frontier
    /// ([`take_line_end`](StreamParser::take_line_end), decision 99). The next chunk that
    /// goes through the machine feeds the queue first. Byte chunks are queued as they are:
    /// the queue is validated once, when it is fed, which reports an invalid byte there
    /// (decision 68). Returns `false` (doing nothing) otherwise.
    #[inline(always)]
    fn take_queued(&mut self, chunk: &[u8]) -> bool {
        let n = chunk.len();
        // `n - 1 < room`: not empty (an empty chunk goes the full way: it still reports a
        // finished or poisoned parser) and within the room.
        if n.wrapping_sub(1) >= self.queue_room {
            return false;
        }
        if let Some(w) = crate::text::word_of(chunk) {
            // Token-sized (4–8 bytes): tested as one word and copied as one, with no loop
            // and no call to `memcpy`. (The exact test only where the first finds a byte
            // that may stop: decision 97.)
            if crate::text::word_may_stop(w, self.queue_xor, self.queue_keep)
                && crate::text::word_has_stop(w, self.queue_stop)
            {
                return false;
            }
            self.queue.push_word(w, chunk);
        } else {
            use crate::text::byte_stops;
            let stop = self.queue_stop;
            // (No loop and no copy call for one byte, nor for two or three: a token of one
            // non-Latin character. One byte's test has no branch either: decision 83.)
            match *chunk {
                [c] if !byte_stops(c, stop) => self.queue.push_byte(c),
                // (Copied from `chunk`: the bytes gathered into an array would be stored one
                // at a time and loaded together, which stalls the store forwarding.)
                [a, b] if !(byte_stops(a, stop) || byte_stops(b, stop)) => self.queue.push(chunk),
                [a, b, c]
                    if !(byte_stops(a, stop) || byte_stops(b, stop) || byte_stops(c, stop)) =>
                {
                    self.queue.push(chunk)
                }
                [_] | [_, _] | [_, _, _] => return false,
                _ => return self.take_queued_long(chunk),
            }
        }
        self.queue_room -= n;
        true
    }

    /// [`take_queued`](StreamParser::take_queued) for a chunk of 9 bytes or more, within the
    /// room: out of the caller's loop, which token-sized chunks keep short (decision 85).
    /// Tested 8 bytes at a time below 32 bytes and searched from 32 (`text::has_stop`), and
    /// appended with two word copies up to 16 bytes.
    #[inline(never)]
    fn take_queued_long(&mut self, chunk: &[u8]) -> bool {
        if crate::text::has_stop(chunk, self.queue_stop) {
            return false;
        }
        self.queue.push_long(chunk);
        self.queue_room -= chunk.len();
        true
    }

    /// The chunk that ends a held line, queued too when the line's end can make nothing
    /// final (decision 99). The last flush held the line whole (`Builder::line_pin_room`)
    /// and, asked here, a `retro_*` tag pins the frontier at the line's first kept char
    /// (`held_start`, decision 95). If every `<` queued since then, and in this chunk up to
    /// its newline, starts a `retro_line` start tag that the tokenizer can read as nothing
    /// else (`Rules::only_retro_line_starts`), each such tag either is text or opens a tag
    /// whose undecided position is that same char (its line's first kept char, the room
    /// keeping its tag within the span limit), whatever it closes: a tag that pins stays
    /// open through the newline, so the newline makes nothing final, and after it only a
    /// tag's end can. The queue then goes on, stopping at `>` alone. The chunk has no `>`
    /// past its newline, nor an `&` while references are decoded (one may decode to a
    /// newline), and the room keeps a byte to spare: past the newline no line pin holds the
    /// frontier, and the oldest open tag, at or after `held_start`, must stay short of its
    /// span limit. Returns `false`, having done nothing, otherwise.
    #[inline(never)]
    fn take_line_end(&mut self, chunk: &[u8]) -> bool {
        use crate::text::{STOP_AMP, STOP_GT};
        self.line_join = false;
        let n = chunk.len();
        if n >= self.queue_room || !self.builder.retro_pins() {
            return false;
        }
        let Some(nl) = crate::text::find1(b'\n', chunk) else {
            return false;
        };
        let after = chunk.get(nl..).unwrap_or_default();
        if crate::text::find1(b'>', after).is_some()
            || (self.queue_stop & STOP_AMP != 0 && crate::text::find1(b'&', chunk).is_some())
        {
            return false;
        }
        let before = self.queue.len();
        self.queue.push(chunk);
        let line = self.queue.as_slice().get(..before + nl).unwrap_or_default();
        if !self.rules.only_retro_line_starts(line) {
            self.queue.truncate(before);
            return false;
        }
        self.queue_room -= n + 1;
        self.set_queue_stop(STOP_GT);
        #[cfg(test)]
        {
            self.line_joined += 1;
        }
        true
    }

    /// Stops the parser at an invalid byte, or at a character the input left incomplete
    /// (`e`, which it returns): only `finish` may follow, and ends the input before it.
    #[cold]
    fn poison(&mut self, e: Error) -> Error {
        if let Error::InvalidUtf8 { offset } | Error::TruncatedUtf8 { offset } = e {
            self.life = Life::Poisoned(offset);
        }
        e
    }

    /// Feeds the queued input (see [`take_queued`](StreamParser::take_queued)) to the
    /// machine, before a chunk that may not wait behind it. Emits nothing, so no flush.
    /// An invalid byte in it is the error, the text before it parsed (the parser is then
    /// poisoned there).
    #[inline(never)]
    fn feed_queue(&mut self) -> Result<(), Error> {
        let fed = self.decode_queue();
        debug_assert!(
            self.builder.flush_is_noop(),
            "queued input made output final"
        );
        fed
    }

    /// Feeds the queue and `chunk` after it in one piece, if `chunk` is short (a token that
    /// may not wait, most often a tag's last bytes); returns whether it did, leaving only
    /// the flush to do. The decoder takes them as it would take them one after the other:
    /// it keeps the start of a character that `chunk` leaves incomplete waiting (decision
    /// 67), and an invalid byte is the error either way, at the same offset, the text before
    /// it parsed (decision 68). Otherwise feeds the queue alone
    /// ([`feed_queue`](StreamParser::feed_queue)), before `chunk` goes its way.
    /// Debug builds never join: the queue goes alone, so that `feed_queue` checks after
    /// every queue that it made nothing final (the claim `take_queued` rests on).
    /// `whole`: `chunk` ends at a character's end (it came as text).
    #[inline(never)]
    fn feed_queue_and(&mut self, chunk: &[u8], whole: bool) -> Result<bool, Error> {
        if chunk.len() > QUEUE_JOIN_MAX || cfg!(debug_assertions) {
            self.feed_queue()?;
            return Ok(false);
        }
        debug_assert!(
            !self.utf8.has_partial(),
            "a character waits behind the queue"
        );
        let mut queue = std::mem::take(&mut self.queue);
        queue.push(chunk);
        // The queue starts at a character's start (a character that waited went to its head:
        // decision 96). Most often its characters are valid: the whole ones validated at once
        // and parsed in one piece, without the decoder's indirect call per piece (decision
        // 68), and the start of one that `chunk` leaves incomplete waits in the decoder.
        let bytes = queue.as_slice();
        if whole || bytes.last().is_some_and(u8::is_ascii) {
            // (Nothing incomplete at the end: no split to look for.)
            if let Some(s) = crate::utf8::to_str(bytes) {
                self.utf8.consumed += bytes.len() as u64;
                self.feed_str(s);
                queue.clear();
                self.queue = queue;
                return Ok(true);
            }
        } else if let Some(split) = self.utf8.split(bytes).filter(|s| s.head.is_none()) {
            self.utf8.keep(&split, bytes.len());
            if !split.body.is_empty() {
                self.feed_str(split.body);
            }
            #[cfg(test)]
            {
                self.split_joined += usize::from(split.has_tail());
            }
            queue.clear();
            self.queue = queue;
            return Ok(true);
        }
        // Otherwise (a bad byte), through the decoder, which reports it at its offset.
        self.queue = queue;
        self.decode_queue()?;
        #[cfg(test)]
        {
            self.split_joined += usize::from(self.utf8.has_partial());
        }
        Ok(true)
    }

    /// The queue through the decoder and into the machine, as if its chunks had gone through
    /// the decoder one by one: it starts with any character that waited in the decoder when
    /// the queue started (decision 96), and one that the last byte chunk left incomplete
    /// waits in the decoder. One validation for the whole queue, not one per chunk (a
    /// validator's set-up costs more than a short chunk's copy). Leaves the queue empty,
    /// its buffer kept; an invalid byte poisons the parser.
    fn decode_queue(&mut self) -> Result<(), Error> {
        let mut queue = std::mem::take(&mut self.queue);
        let mut utf8 = std::mem::take(&mut self.utf8);
        let fed = utf8.feed(queue.as_slice(), &mut |s| self.feed_str(s));
        self.utf8 = utf8;
        queue.clear();
        self.queue = queue;
        fed.map_err(|e| self.poison(e))
    }

    /// The path for a chunk of plain text within the budget the last flush left
    /// (`Builder::plain_budget`) while the queue takes nothing: it is appended and nothing
    /// else happens, exactly as the full path would do with it. Returns `false` (doing
    /// nothing) otherwise. `s` is `chunk` as text if known. Tried first in the out-of-line
    /// part of an update, not inline with the queue's test: inline, its code made the
    /// caller's loop keep its own counters in memory (decision 83).
    #[inline(always)]
    fn take_plain(&mut self, chunk: &[u8], s: Option<&str>) -> bool {
        // (An empty chunk goes the full way: it still reports a finished or poisoned parser.)
        if chunk.is_empty() || chunk.len() > self.plain_budget.min(PLAIN_MAX) {
            return false;
        }
        if !self.builder.try_append_plain_token(chunk, s) {
            return self.take_plain_unicode(chunk, s);
        }
        self.plain_budget -= chunk.len();
        self.text_budget = self.plain_budget;
        debug_assert!(self.queue_room == 0, "plain budget with the queue on");
        debug_assert!(self.builder.flush_is_noop(), "plain budget overrun");
        self.src += chunk.len();
        self.utf8.consumed += chunk.len() as u64;
        true
    }

    /// [`take_plain`](StreamParser::take_plain) for plain text with non-ASCII characters
    /// (and no ASCII byte that the text state acts on), within the same budget. A byte
    /// chunk may complete a character that the last one left incomplete, and may end
    /// inside one, which then waits. Returns `false` (doing nothing) otherwise.
    #[inline(never)]
    fn take_plain_unicode(&mut self, chunk: &[u8], s: Option<&str>) -> bool {
        if self.text_budget == 0 {
            return false;
        }
        let Some((n, waits)) = self.append_unicode(chunk, s, self.text_budget) else {
            return false;
        };
        self.text_budget -= n;
        // The ASCII path (`try_append_plain`) only runs with no partial character.
        self.plain_budget = if waits { 0 } else { self.text_budget };
        debug_assert!(self.queue_room == 0, "plain budget with the queue on");
        debug_assert!(self.builder.flush_is_noop(), "plain budget overrun");
        true
    }

    /// Appends a chunk of plain text with non-ASCII characters (`text::plain_str`) that
    /// decodes to at most `room` bytes of output, as the full path would: a byte chunk may
    /// complete a character that the last one left incomplete, and may end inside one,
    /// which then waits in the decoder. Returns the bytes appended and whether a character
    /// waits, or `None` (doing nothing) if the chunk is not such text, is invalid, or does
    /// not fit. (Out of line, as `take_plain_unicode` is: the ASCII paths beside it in
    /// `update_slow` stay as they were.)
    #[inline(never)]
    fn append_unicode(
        &mut self,
        chunk: &[u8],
        s: Option<&str>,
        room: usize,
    ) -> Option<(usize, bool)> {
        if chunk.is_empty() || chunk.len() > PLAIN_MAX || !crate::text::plain_str(chunk) {
            return None;
        }
        if let Some(s) = s {
            // Text after an incomplete character is an error: the full path reports it.
            if self.utf8.has_partial() || s.len() > room || !self.builder.append_plain_str(None, s)
            {
                return None;
            }
            self.utf8.consumed += chunk.len() as u64;
            self.src += s.len();
            return Some((s.len(), false));
        }
        let split = self.utf8.split(chunk)?;
        let n = split.head.map_or(0, char::len_utf8) + split.body.len();
        if n > room || (n > 0 && !self.builder.append_plain_str(split.head, split.body)) {
            return None;
        }
        self.utf8.keep(&split, chunk.len());
        self.src += n;
        #[cfg(test)]
        {
            self.split_taken += 1;
        }
        Some((n, split.has_tail()))
    }

    /// The fast path inside a tag candidate (a tag streamed a few bytes at a time): a short
    /// chunk of whole characters that neither completes nor aborts the candidate only
    /// extends it (`Tokenizer::take_tag_chunk`). The builder is untouched, so the flush the
    /// full path ends with would emit nothing, and the plain-text budgets stay 0 (no plain
    /// text passes inside a tag). Returns `false` (doing nothing) otherwise. `text` is
    /// `chunk` as text if known.
    #[inline]
    fn take_tag(&mut self, chunk: &[u8], text: Option<&str>) -> bool {
        if chunk.len() > TAG_CHUNK_MAX
            || !self.tokenizer.in_tag()
            || self.utf8.has_partial()
            || !self.tokenizer.take_tag_chunk(&self.rules, chunk, text)
        {
            return false;
        }
        let len = chunk.len();
        debug_assert!(self.plain_budget == 0 && self.text_budget == 0);
        debug_assert!(self.builder.flush_is_noop(), "builder changed inside a tag");
        self.src += len;
        self.utf8.consumed += len as u64;
        #[cfg(test)]
        {
            self.tag_taken += 1;
        }
        true
    }

    /// The fast path for a chunk that opens a tag (`id <ci`, `. </no`, `a <`): plain text
    /// within the plain budget `budget` (that of the last flush), then `<` at `k`, then
    /// nothing or the start of a name (or of `/` and a name) that the tag path takes
    /// (`Tokenizer::take_open_chunk`). The text is appended as
    /// [`take_plain`](StreamParser::take_plain) appends it (`kept` as for it) and the
    /// candidate opens as the tokenizer opens it on a `<` in text; the builder sees nothing
    /// else, so the flush the full path ends with would emit nothing, and inside the
    /// candidate the budgets stay 0. Returns `false` (doing nothing) otherwise. `text` is
    /// `chunk` as text if known.
    #[inline]
    fn take_open(
        &mut self,
        chunk: &[u8],
        (k, kept): (usize, usize),
        budget: usize,
        text: Option<&str>,
    ) -> bool {
        let Some((&b'<', rest)) = chunk.get(k..).and_then(<[u8]>::split_first) else {
            return false;
        };
        // (A positive budget means plain text passed the tokenizer, and no partial
        // character waited.) A `>` or `<` in the rest ends or aborts the candidate: the full
        // path's work. `k + 1` is a char boundary: the bytes before it are ASCII.
        if budget == 0
            || k > budget
            || crate::text::find2(b'>', b'<', rest).is_some()
            || !self.tokenizer.take_open_chunk(
                &self.rules,
                self.src + k,
                rest,
                text.and_then(|s| s.get(k + 1..)),
            )
        {
            return false;
        }
        if let Some(head) = chunk.get(..k) {
            self.builder.append_plain(head, kept);
        }
        debug_assert!(self.builder.flush_is_noop(), "plain budget overrun");
        debug_assert!(self.plain_budget == 0 && self.text_budget == 0);
        self.src += chunk.len();
        #[cfg(test)]
        {
            self.open_taken += 1;
        }
        true
    }

    /// The stop bits of [`take_queued`](StreamParser::take_queued), and its word test for
    /// them (decision 97).
    fn set_queue_stop(&mut self, stop: u8) {
        self.queue_stop = stop;
        (self.queue_xor, self.queue_keep) = crate::text::word_stop_words(stop);
    }

    /// Emits what is final and sets the room of [`take_queued`](StreamParser::take_queued)
    /// or else the budget of [`take_plain`](StreamParser::take_plain).
    fn flush(&mut self) -> Events<'_> {
        self.builder.flush();
        let passes = self.tokenizer.passes_plain_text(&self.rules);
        debug_assert!(self.queue.is_empty());
        self.queue_room = 0;
        self.queue_stop = 0;
        self.direct = false;
        self.line_join = false;
        // `Builder::plain_budget`, once asked.
        let mut budget = None;
        if self.queue_on && passes {
            use crate::text::{STOP_AMP, STOP_GT, STOP_NL};
            let amp = if self.rules.decode_entities {
                STOP_AMP
            } else {
                0
            };
            // The line held whole: no tag can make anything final before its end, only a
            // newline (or a reference, which may decode to one). Otherwise the plain
            // budget, which holds for text: a tag may end the queue. Not the line regime
            // while an open tag may have an annotation out already: a tag may close it, or
            // text reach its span limit, and the annotation learns how it closed in that
            // update (the plain budget stops short of the limit, and `>` ends the queue).
            // While a `retro_*` tag pins the frontier, only a tag can end the queue: not a
            // newline, nor a reference (decision 95).
            let (room, stop) = match self.builder.line_pin_room() {
                Some(room) if room > 0 && !self.builder.open_before_frontier() => {
                    // (Whether a `retro_*` tag pins is asked at the line's end, by the one
                    // flush of the line that gets there.)
                    self.line_join = self.builder.has_open();
                    (room, STOP_NL | amp)
                }
                // (Valid with a partial character waiting too: the budget counts decoded
                // text.)
                _ => {
                    let room = *budget.insert(self.builder.plain_budget());
                    if self.builder.retro_pins() {
                        (room, STOP_GT)
                    } else {
                        (room, STOP_NL | STOP_GT | amp)
                    }
                }
            };
            self.set_queue_stop(stop);
            // The room counts output; a queued byte is one byte of it if the queue is UTF-8
            // (else, in strict mode, the queue is an error and outputs nothing past the bad
            // byte), and at most three in lossy mode (a bad byte becomes U+FFFD: decision
            // 68). A character waiting in the decoder becomes the queue's head (below), and
            // its bytes so far count too.
            let room = if self.utf8.lossy { room / 3 } else { room };
            self.queue_room = room
                .saturating_sub(self.utf8.partial().len())
                .min(QUEUE_MAX);
            if self.queue_room > 0 {
                // The first time a line may wait: room for a line, in one step rather
                // than by doubling from 8 bytes (decision 49).
                self.queue.reserve_first(QUEUE_FIRST);
                // A character that waits in the decoder becomes the queue's head, so that
                // the decoder gets it back in one piece with the queue: one validation and
                // one piece for the machine, not the character alone first (decision 96).
                if self.utf8.has_partial() {
                    self.queue.push(self.utf8.partial());
                    self.utf8.unfeed_partial();
                }
                // The queue takes what the plain budgets would (plain text has no newline
                // and no `&`), but for a chunk past its room or one with a `>` where `>`
                // stops it, which now goes the full way; and nothing may be appended past
                // what it holds. With the budgets at 0 from here, a queued chunk need not
                // clear them, and the line regime need not ask for them (decision 70).
                self.plain_budget = 0;
                self.text_budget = 0;
                return Events::of(&mut self.builder.events);
            }
        }
        self.text_budget = match (passes, budget) {
            (false, _) => 0,
            (true, Some(b)) => b,
            (true, None) => self.builder.plain_budget(),
        };
        self.plain_budget = if self.utf8.has_partial() {
            0
        } else {
            self.text_budget
        };
        // (With a budget, plain text is not final yet: it takes `take_plain`.)
        self.direct =
            self.queue_on && passes && self.text_budget == 0 && self.builder.direct_ready();
        Events::of(&mut self.builder.events)
    }

    /// The path for a chunk of plain text (`text::PLAIN_CLASS`) while the last flush found
    /// it final as soon as it arrives (`direct`: text streamed inside forward tags with
    /// nothing held but a trailing run that trimming might cut off, in a configuration with
    /// no `retro_line` or `retro_claim` tag): it is appended, and emitted as one segment
    /// annotated by the open tags up to its own such run, if any (which stays held), as the
    /// full path would (which would then find the machine as it was: `direct` stays set),
    /// without the full path's dispatch and without working out the frontier and the next
    /// budgets again (decisions 87 and 91). Text with non-ASCII characters takes it too,
    /// and a byte chunk of it may complete a character the last one left incomplete or end
    /// inside one, which waits in the decoder (decision 92). Returns `false` (doing
    /// nothing) otherwise.
    #[inline]
    fn take_direct(&mut self, chunk: &[u8], s: Option<&str>) -> bool {
        let n = chunk.len();
        if n == 0 || n > PLAIN_MAX {
            return false;
        }
        let room = self.builder.plain_room_now();
        // ASCII (not after a partial character: that would be an error), else text with
        // non-ASCII characters, which a byte chunk may split (decision 92).
        let partial = self.utf8.has_partial();
        if !partial && n <= room && self.builder.try_append_plain_token(chunk, s) {
            self.src += n;
            self.utf8.consumed += n as u64;
        } else if (!partial && chunk.is_ascii()) || self.append_unicode(chunk, s, room).is_none() {
            return false;
        }
        self.builder.flush_direct();
        #[cfg(test)]
        {
            self.direct_taken += 1;
        }
        true
    }

    /// The fast path for short chunks of plain text between constructs (most tokens of an
    /// LLM stream): the tokenizer would pass them to the builder unchanged, so they skip it.
    /// Does nothing unless that holds; `s` is `chunk` as text if known (needed for text
    /// with non-ASCII characters, which otherwise answers [`Plain::NeedText`]). A chunk
    /// that opens a tag takes [`take_open`](StreamParser::take_open) within `budget`, the
    /// plain budget before this update (0 if it may not).
    #[inline(always)]
    fn feed_plain(&mut self, chunk: &[u8], budget: usize, s: Option<&str>) -> Plain {
        if chunk.len() > PLAIN_MAX || !self.tokenizer.passes_plain_text(&self.rules) {
            return Plain::Not;
        }
        let prefix = crate::text::plain_ascii_prefix(chunk);
        let pushed = match chunk.get(prefix.0..) {
            Some([]) => self.builder.push_plain(chunk, prefix.1),
            Some([b'<', ..]) if self.take_open(chunk, prefix, budget, s) => return Plain::Opened,
            Some(rest) if crate::text::plain_str(rest) => false,
            _ => return Plain::Not,
        };
        if !pushed {
            let s = match s {
                Some(s) => s,
                // Plain ASCII is valid UTF-8 (other text comes with `s`).
                None if chunk.is_ascii() => match crate::text::as_text(chunk) {
                    Some(s) => s,
                    None => return Plain::Not,
                },
                None => return Plain::NeedText,
            };
            if s.is_empty() {
                return Plain::Not;
            }
            self.builder.text(s);
        }
        self.src += chunk.len();
        Plain::Fed
    }

    fn feed_str(&mut self, mut s: &str) {
        // A large chunk is fed in slices with an emission after each, so held output (and
        // the working set) stays small; the machine is the same and so is the result.
        while s.len() > FEED_SLICE {
            let cut = crate::text::floor_boundary(s, FEED_SLICE);
            let (head, tail) = s.split_at(cut);
            self.tokenizer
                .feed(&self.rules, &mut self.builder, head, self.src);
            self.src += head.len();
            self.builder.flush();
            s = tail;
        }
        self.tokenizer
            .feed(&self.rules, &mut self.builder, s, self.src);
        self.src += s.len();
    }

    /// Feeds a text chunk and returns the events that became final.
    ///
    /// # Errors
    /// [`Error::Finished`] after [`finish`](StreamParser::finish); [`Error::Poisoned`] after
    /// an invalid UTF-8 error; [`Error::InvalidUtf8`] for a bad byte of earlier byte chunks
    /// that this update parses (see [`update_bytes`](StreamParser::update_bytes)), such as
    /// a character that a byte chunk left incomplete and this chunk does not complete.
    #[inline(always)]
    pub fn update(&mut self, chunk: &str) -> Result<Events<'_>, Error> {
        if self.take_queued(chunk.as_bytes()) {
            // (Nothing was emitted since the last call drained the events.)
            return Ok(Events(None));
        }
        self.update_str(chunk)
    }

    /// The start of the full path for `chunk` (both `update` and `update_bytes`): the
    /// parser must be running, a new stream's output buffer takes its first room (decision
    /// 62), and the queue goes first. Returns whether the queue was fed together with
    /// `chunk` ([`feed_queue_and`](StreamParser::feed_queue_and)), leaving only the flush.
    /// `whole`: `chunk` ends at a character's end (it came as text).
    #[inline]
    fn start_full(&mut self, chunk: &[u8], whole: bool) -> Result<bool, Error> {
        self.check_running()?;
        self.builder.reserve_first_text(HELD_FIRST);
        self.queue_room = 0;
        Ok(!self.queue.is_empty() && self.feed_queue_and(chunk, whole)?)
    }

    /// [`update`](StreamParser::update) past the queue.
    #[inline(never)]
    fn update_str(&mut self, chunk: &str) -> Result<Events<'_>, Error> {
        if self.line_join && self.take_line_end(chunk.as_bytes()) {
            return Ok(Events(None));
        }
        if std::mem::take(&mut self.direct) && self.take_direct(chunk.as_bytes(), Some(chunk)) {
            self.direct = true;
            return Ok(Events::of(&mut self.builder.events));
        }
        if self.take_plain(chunk.as_bytes(), Some(chunk)) {
            return Ok(Events::of(&mut self.builder.events));
        }
        if self.start_full(chunk.as_bytes(), true)? {
            return Ok(self.flush());
        }
        if self.utf8.has_partial() {
            return self.update_slow(chunk.as_bytes());
        }
        if self.take_tag(chunk.as_bytes(), Some(chunk)) {
            return Ok(Events::of(&mut self.builder.events));
        }
        let budget = std::mem::take(&mut self.plain_budget);
        self.text_budget = 0;
        // Input offsets (of a later invalid byte) count text chunks too.
        self.utf8.consumed += chunk.len() as u64;
        match self.feed_plain(chunk.as_bytes(), budget, Some(chunk)) {
            Plain::Fed => {}
            Plain::Opened => return Ok(Events::of(&mut self.builder.events)),
            Plain::Not | Plain::NeedText => self.feed_str(chunk),
        }
        Ok(self.flush())
    }

    /// Feeds a byte chunk, which may end (or start) inside a UTF-8 character.
    ///
    /// # Errors
    /// [`Error::InvalidUtf8`] naming the offset of the first bad byte (in strict mode), from
    /// the call that parses it: this one, or, if the chunk waited unparsed with the rest of
    /// its line (tokens that could not make anything final yet: DESIGN.md, decision 68),
    /// the update that ends the wait (a newline, a tag's end, at most 4 KiB of input later)
    /// or [`finish`](StreamParser::finish). The offset, and the output, are the same
    /// however the input is split. The valid text before the bad byte has been parsed; its
    /// events come out of a following `finish`, which ends the input there. Further updates
    /// return [`Error::Poisoned`]. Also [`Error::Finished`] / [`Error::Poisoned`] as for
    /// [`update`](StreamParser::update).
    #[inline(always)]
    pub fn update_bytes(&mut self, chunk: &[u8]) -> Result<Events<'_>, Error> {
        if self.take_queued(chunk) {
            return Ok(Events(None));
        }
        self.update_slow(chunk)
    }

    /// [`update_bytes`](StreamParser::update_bytes) past the queue.
    #[inline(never)]
    fn update_slow(&mut self, chunk: &[u8]) -> Result<Events<'_>, Error> {
        if self.line_join && self.take_line_end(chunk) {
            return Ok(Events(None));
        }
        if std::mem::take(&mut self.direct) && self.take_direct(chunk, None) {
            self.direct = true;
            return Ok(Events::of(&mut self.builder.events));
        }
        if self.take_plain(chunk, None) {
            return Ok(Events::of(&mut self.builder.events));
        }
        if self.start_full(chunk, false)? {
            return Ok(self.flush());
        }
        if self.take_tag(chunk, None) {
            return Ok(Events::of(&mut self.builder.events));
        }
        // A byte chunk of plain text that completes or splits a character.
        if (self.utf8.has_partial() || chunk.last().is_some_and(|&c| c >= 0x80))
            && self.take_plain_unicode(chunk, None)
        {
            return Ok(Events::of(&mut self.builder.events));
        }
        let budget = std::mem::take(&mut self.plain_budget);
        self.text_budget = 0;
        if !self.utf8.has_partial() {
            let plain = self.feed_plain(chunk, budget, None);
            if plain == Plain::Opened {
                self.utf8.consumed += chunk.len() as u64;
                return Ok(Events::of(&mut self.builder.events));
            }
            if plain == Plain::Fed {
                self.utf8.consumed += chunk.len() as u64;
                return Ok(self.flush());
            }
            // Fast path: a chunk of whole characters.
            if let Some(s) = crate::text::as_text(chunk) {
                self.utf8.consumed += chunk.len() as u64;
                // (Not `Opened`: that needs only ASCII, and the first call said `NeedText`.)
                if plain == Plain::Not || self.feed_plain(chunk, 0, Some(s)) != Plain::Fed {
                    self.feed_str(s);
                }
                return Ok(self.flush());
            }
        }
        let mut utf8 = std::mem::take(&mut self.utf8);
        let result = utf8.feed(chunk, &mut |s| {
            if self.feed_plain(s.as_bytes(), 0, Some(s)) != Plain::Fed {
                self.feed_str(s);
            }
        });
        self.utf8 = utf8;
        if let Err(e) = result {
            return Err(self.poison(e));
        }
        Ok(self.flush())
    }

    /// Ends the input: unfinished constructs become text, open tags close by recovery, and
    /// every remaining event is returned.
    ///
    /// # Errors
    /// [`Error::Finished`] if called twice. [`Error::TruncatedUtf8`] if the last byte chunk
    /// ended inside a character, [`Error::InvalidUtf8`] if a bad byte waited unparsed (see
    /// [`update_bytes`](StreamParser::update_bytes)), in strict mode; the parser is then
    /// poisoned at that offset and a second `finish` ends the input before it.
    pub fn finish(&mut self) -> Result<Events<'_>, Error> {
        self.plain_budget = 0;
        self.text_budget = 0;
        self.queue_room = 0;
        self.direct = false;
        match self.life {
            Life::Finished => return Err(Error::Finished),
            Life::Poisoned(_) => {}
            Life::Running => {
                if !self.queue.is_empty() {
                    self.feed_queue()?;
                }
                let mut utf8 = std::mem::take(&mut self.utf8);
                let result = utf8.finish(&mut |s| self.feed_str(s));
                self.utf8 = utf8;
                result.map_err(|e| self.poison(e))?;
            }
        }
        self.tokenizer.finish(&self.rules, &mut self.builder);
        self.builder.finish();
        self.life = Life::Finished;
        Ok(Events::of(&mut self.builder.events))
    }

    /// Whether this parser is, up to positions, what a new one with the same configuration
    /// is: at the start of an output line (where fences are recognized, also of a source
    /// line: a fence opens only there), with every output byte emitted, no tag open, no
    /// construct unfinished, no partial character and nothing queued. Then a new parser fed
    /// the rest of the input emits events that, merged, equal what this one would emit
    /// (its output positions counted from [`output_len`](Self::output_len), its source
    /// offsets from the input bytes fed so far), and its invalid UTF-8 errors are the same
    /// errors, their offsets counted from there too. So independent parts of a large input
    /// can be parsed at once, each started at such a point (`kxml --format count` does this
    /// on files: DESIGN.md, decision 71).
    ///
    /// It errs on one side only: it may say `false` where a restart would have worked (a
    /// state it does not recognize as new), never `true` where it would not. It is `false`
    /// after `finish` and after an error. It does not depend on how the input was split,
    /// except that input still queued unparsed (a chunk that ended mid-line) makes it
    /// `false`; a chunk that ends at the newline leaves nothing queued.
    ///
    /// ```
    /// use kindaxml_stream::{Config, StreamParser};
    /// let config = Config::default().with_tags(["cite", "note"])?;
    /// let mut parser = StreamParser::new(&config);
    /// parser.update("Shipped <cite id=1>last week</cite>.\n")?;
    /// assert!(parser.is_restartable());
    /// // A postfix cite stays open until a later tag closes it: a `</cite>` would still
    /// // change its span.
    /// parser.update("Shipped last week <cite id=2>.\n")?;
    /// assert!(!parser.is_restartable());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_restartable(&self) -> bool {
        matches!(self.life, Life::Running)
            && !self.utf8.has_partial()
            && self.queue.is_empty()
            && self.tokenizer.at_fresh_line(&self.rules)
            && self.builder.at_fresh_line()
    }

    /// Output bytes held back: produced but not yet emitted. Input waiting unparsed in the
    /// queue has produced nothing yet (see [`pending_input_bytes`](Self::pending_input_bytes)).
    pub fn held_output_bytes(&self) -> usize {
        self.builder.held_len()
    }

    /// Input bytes not yet turned into output: an unfinished construct (tag candidate,
    /// reference, delimiter) at the end of the input so far, the start of a character that
    /// a byte chunk left incomplete, and input queued, unparsed, while nothing in it could
    /// become final (at most 4 KiB; DESIGN.md, decisions 48 and 96).
    pub fn pending_input_bytes(&self) -> usize {
        self.tokenizer.pending_len() + self.queue.len() + self.utf8.partial().len()
    }

    /// Bytes of output text produced so far (emitted or held); input still waiting unparsed
    /// (see [`pending_input_bytes`](Self::pending_input_bytes)) is not counted until parsed.
    pub fn output_len(&self) -> usize {
        self.builder.out_len()
    }
}

/// Parses a whole input: the same machine as [`StreamParser`], fed once.
///
/// ```
/// use kindaxml_stream::{parse, Config};
/// let config = Config::default().with_tags(["cite"])?;
/// let doc = parse("The sky is blue <cite id=1>. Grass is green <cite id=2>.", &config);
/// let cited: Vec<_> = doc
///     .segments()
///     .iter()
///     .filter(|s| !s.annotations().is_empty())
///     .map(|s| (s.text(), s.annotations()[0].attrs().get("id").and_then(|v| v.as_str())))
///     .collect();
/// assert_eq!(cited, [("The sky is blue", Some("1")), ("Grass is green", Some("2"))]);
/// # Ok::<(), kindaxml_stream::ConfigError>(())
/// ```
pub fn parse(input: &str, config: &Config) -> Document {
    parse_with(&mut StreamParser::new(config), input)
}

/// [`parse`] with a new `parser` (tests set its switches first, and read its counts after).
#[inline(always)]
fn parse_with(parser: &mut StreamParser, input: &str) -> Document {
    // The builder emits straight into the document (no event list in between).
    let mut doc = Document::new();
    // Nothing is read before the end, so an input of up to 64 KiB goes through the machine
    // in one piece and is emitted once, at the end: its text is then one buffer (the
    // builder's own, adopted without a copy) and the segments are ranges of it. A longer one
    // goes in 64 KiB slices with an emission after each that has spans or markers to place
    // (as `update` does), so the builder's buffer and span lists stay small and warm instead
    // of growing with the input (DESIGN.md, decision 27). The result is that of any chunking
    // (the streaming guarantee); this is only the cheapest one.
    parser.builder.reserve_text(input.len().min(FEED_SLICE));
    let mut rest = input;
    while rest.len() > FEED_SLICE {
        let (head, tail) = rest.split_at(crate::text::floor_boundary(rest, FEED_SLICE));
        parser
            .tokenizer
            .feed(&parser.rules, &mut parser.builder, head, parser.src);
        parser.src += head.len();
        // Text alone (no span or marker to place) waits for one emission at the end, which
        // adopts the buffer; slices of it would be merged back by copying.
        if parser.builder.has_annotations_pending() {
            parser.builder.flush_into(&mut doc);
        } else {
            // Room for the rest of the input, as an unsliced parse reserves.
            parser.builder.reserve_text(tail.len());
        }
        rest = tail;
    }
    parser
        .tokenizer
        .feed(&parser.rules, &mut parser.builder, rest, parser.src);
    parser.src += rest.len();
    parser.tokenizer.finish(&parser.rules, &mut parser.builder);
    parser.builder.finish_into(&mut doc);
    parser.life = Life::Finished;
    doc
}

/// Parses a whole byte input.
///
/// # Errors
/// [`Error::InvalidUtf8`] / [`Error::TruncatedUtf8`] naming the offset of the first bad byte.
pub fn parse_bytes(input: &[u8], config: &Config) -> Result<Document, Error> {
    if let Some(s) = crate::utf8::to_str(input) {
        return Ok(parse(s, config));
    }
    let s = std::str::from_utf8(input).map_err(|e| match e.error_len() {
        Some(_) => Error::InvalidUtf8 {
            offset: e.valid_up_to() as u64,
        },
        None => Error::TruncatedUtf8 {
            offset: e.valid_up_to() as u64,
        },
    })?;
    Ok(parse(s, config))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{Annotation, Event, SegText};

    /// Per text event: whether its buffer was adopted (`true`) or copied (`false`: into a
    /// buffer of its own, the pool, or the segment itself).
    fn buffers(events: &[Event]) -> Vec<bool> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Text(s) => match &s.text {
                    SegText::Shared { buf, .. } => Some(buf.adopted()),
                    SegText::Inline(_) => Some(false),
                    SegText::Owned(_) => None,
                },
                Event::Marker(_) => None,
            })
            .collect()
    }

    /// The annotations `events` carry, in order (clones share what they learn later).
    fn annotations(events: &[Event]) -> impl Iterator<Item = Annotation> + '_ {
        events.iter().flat_map(|e| match e {
            Event::Text(s) => s.annotations().to_vec(),
            Event::Marker(m) => vec![m.annotation().clone()],
        })
    }

    /// A parser that queues nothing (decision 48), so that every chunk reaches the paths
    /// the queue would otherwise take it from.
    fn unqueued(config: &Config) -> StreamParser {
        let mut p = StreamParser::new(config);
        p.queue_on = false;
        p
    }

    /// Feeds `tokens` (as `&str` or as bytes), recording per call whether the budgeted
    /// plain path took it (`Some(events)`) or not (`None`), and the merged document.
    fn stream_tokens(
        config: &Config,
        tokens: &[&str],
        bytes: bool,
    ) -> (Vec<Option<usize>>, Document) {
        let mut p = unqueued(config);
        let mut doc = Document::new();
        let mut took = Vec::new();
        for t in tokens {
            let budget = p.plain_budget;
            let held = p.held_output_bytes();
            let ev: Vec<Event> = if bytes {
                p.update_bytes(t.as_bytes()).unwrap().collect()
            } else {
                p.update(t).unwrap().collect()
            };
            let fast = p.plain_budget == budget.wrapping_sub(t.len()) && t.len() <= budget;
            if fast {
                // Nothing emitted, the text held.
                assert!(ev.is_empty());
                assert_eq!(p.held_output_bytes(), held + t.len());
            }
            took.push(fast.then_some(ev.len()));
            doc.extend(ev);
        }
        doc.extend(p.finish().unwrap());
        (took, doc)
    }

    #[test]
    fn plain_tokens_take_the_budgeted_path_with_the_same_result() {
        // A postfix cite recovers `retro_line`: the current line is held, so plain tokens
        // after its first kept char are within the budget; `<`, `&`, newlines are not.
        let config = Config::default().with_tags(["cite", "note"]).unwrap();
        let tokens = [
            "We",
            " shipped",
            " it",
            " last",
            " week",
            " <cite",
            " id=1>",
            ".",
            "\n",
            "Привет",
            ", мир",
            " — 世界",
            " ok",
            " <note>",
            "inside",
            " a",
            " note",
            "</note>",
            " R&D",
            " more",
            " text",
            " <cite id=2>",
            ".",
            "\n",
            "  ",
            "tail",
        ];
        let input: String = tokens.concat();
        for bytes in [false, true] {
            let (took, doc) = stream_tokens(&config, &tokens, bytes);
            assert_eq!(doc, parse(&input, &config), "bytes: {bytes}");
            let taken: Vec<&str> = tokens
                .iter()
                .zip(&took)
                .filter(|(_, t)| t.is_some())
                .map(|(s, _)| *s)
                .collect();
            // ASCII words mid-line, the non-ASCII ones (whole characters), and the text
            // inside the open note; never markup, entities or newlines.
            for w in [
                " shipped",
                " it",
                " last",
                " week",
                ", мир",
                " — 世界",
                " ok",
                " a",
            ] {
                assert!(
                    taken.contains(&w),
                    "{w:?} not taken (bytes: {bytes}): {taken:?}"
                );
            }
            for w in [
                " <cite",
                " id=1>",
                "\n",
                " <note>",
                "</note>",
                " R&D",
                " <cite id=2>",
            ] {
                assert!(!taken.contains(&w), "{w:?} taken");
            }
        }
        // Without a retro tag every byte is final at once: no budget, text is emitted.
        let forward = Config::default()
            .with_tags(["note"])
            .unwrap()
            .with_recovery("note", crate::Strategy::ForwardUntilTag)
            .unwrap();
        let (took, doc) = stream_tokens(&forward, &tokens, false);
        assert_eq!(doc, parse(&input, &forward));
        assert!(took.iter().all(Option::is_none));
    }

    /// Byte chunks that end inside a character, or complete one, take the budgeted path
    /// too (the character waits in the decoder), with the document of `parse`.
    #[test]
    fn byte_chunks_splitting_characters_take_the_budgeted_path() {
        let config = Config::default().with_tags(["cite"]).unwrap();
        let line = "世界は広い — Привет, мир 🎉 and ünïcödé";
        let input = format!("Intro <cite id=0>.\n{line} <cite id=1>.\nend");
        let region = {
            // Past the line's first char (which the cursor must see first) to its end.
            let start = input.find(line).unwrap() + '世'.len_utf8();
            start..start + line.len() - '世'.len_utf8()
        };
        for size in 1..=6 {
            let mut p = unqueued(&config);
            let mut doc = Document::new();
            let mut at = 0;
            for c in input.as_bytes().chunks(size) {
                let (taken, held) = (p.split_taken, p.held_output_bytes());
                let ev: Vec<Event> = p.update_bytes(c).unwrap().collect();
                let inside = region.contains(&at) && region.contains(&(at + c.len() - 1));
                let splits = !input.is_char_boundary(at) || !input.is_char_boundary(at + c.len());
                if inside && splits {
                    // Taken: nothing emitted, the decoded text held.
                    assert_eq!(p.split_taken, taken + 1, "chunks of {size} at {at}");
                    assert!(ev.is_empty());
                    assert!(p.held_output_bytes() >= held);
                }
                at += c.len();
                doc.extend(ev);
            }
            doc.extend(p.finish().unwrap());
            assert_eq!(doc, parse(&input, &config), "chunks of {size}");
        }
    }

    /// Chunks inside a tag candidate that neither complete nor abort it (no `>`; the `/` of
    /// an end tag included) take the tag path: nothing emitted, the candidate longer by the
    /// chunk, and the document of `parse`, as bytes and as text.
    #[test]
    fn chunks_inside_a_tag_take_the_tag_path() {
        let config = Config::default()
            .with_tags(["cite", "note"])
            .unwrap()
            .with_recovery("note", crate::Strategy::ForwardUntilTag)
            .unwrap();
        let input = "Intro <cite id=\"a b\nc\" src='x>y' ok>body</cite> and \
                     <note lang=en-GB v=é>nö</note>, <unknown a=1>.";
        let tags: Vec<(usize, usize)> = input
            .match_indices('<')
            .map(|(lt, _)| {
                let after = input[lt + 1..].find('>').unwrap();
                (lt, lt + 1 + after)
            })
            .collect();
        // The `>` inside the quoted `src` value ends that candidate (a tag ends at its
        // first `>`): the lexer agrees with this scan.
        assert_eq!(tags.len(), 5);
        for size in 1..=6 {
            for as_text in [false, true] {
                let mut p = unqueued(&config);
                let mut doc = Document::new();
                let mut at = 0;
                let mut expect_taken = 0;
                while at < input.len() {
                    let mut cut = (at + size).min(input.len());
                    while as_text && !input.is_char_boundary(cut) {
                        cut += 1;
                    }
                    let c = &input.as_bytes()[at..cut];
                    let end = cut - 1;
                    let inside = tags.iter().any(|&(lt, gt)| at > lt && end < gt);
                    let (taken, pending) = (p.tag_taken, p.pending_input_bytes());
                    let ev: Vec<Event> = if as_text {
                        p.update(&input[at..cut]).unwrap().collect()
                    } else {
                        p.update_bytes(c).unwrap().collect()
                    };
                    if inside && input.is_char_boundary(at) && input.is_char_boundary(end + 1) {
                        let what = format!("chunks of {size} at {at} ({c:?}, text {as_text})");
                        assert_eq!(p.tag_taken, taken + 1, "{what}");
                        assert!(ev.is_empty(), "{what}");
                        assert_eq!(p.pending_input_bytes(), pending + c.len(), "{what}");
                        expect_taken += 1;
                    }
                    at = cut;
                    doc.extend(ev);
                }
                doc.extend(p.finish().unwrap());
                assert_eq!(
                    doc,
                    parse(input, &config),
                    "chunks of {size}, text {as_text}"
                );
                assert_eq!(
                    p.tag_taken, expect_taken,
                    "chunks of {size}, text {as_text}"
                );
            }
        }
    }

    /// Chunks that open a tag (`id <ci`, `. </no`, `a <`: plain ASCII text within the plain
    /// budget, then a `<` that ends the chunk or the start of a tag before its `>`) take the
    /// opening path: nothing emitted, the text held, the candidate pending, and the
    /// document of `parse`, as bytes and as text. Chunks that hold anything else, or come
    /// where the text does not fit the budget, do not.
    #[test]
    fn chunks_that_open_a_tag_take_the_opening_path() {
        // Postfix cites hold their line, so plain text has a budget on most lines; spans of
        // at most 24 bytes make it small, so that some chunks' text does not fit.
        let wide = Config::default().with_tags(["cite", "note"]).unwrap();
        let narrow = wide.clone().with_max_span_bytes(24).unwrap();
        let input = "We shipped it <cite id=1>. Then the note <note>body</note> and \
                     more <b>bold</b> text, R&D <cite id=2>.\nNext line <cite id=3>. \
                     a < b, <!-- c --> and <x/> end <cite id=4>.";
        let tags: Vec<(usize, usize)> = input
            .match_indices('<')
            .filter(|(lt, _)| {
                let next = input.as_bytes()[lt + 1];
                next.is_ascii_alphabetic() || next == b'/'
            })
            .map(|(lt, _)| (lt, lt + input[lt..].find('>').unwrap()))
            .collect();
        assert_eq!(tags.len(), 9);
        let (mut total, mut over) = (0, 0);
        for (size, config) in (1..=8).flat_map(|n| [(n, &wide), (n, &narrow)]) {
            for as_text in [false, true] {
                let mut p = unqueued(config);
                let mut doc = Document::new();
                let mut at = 0;
                let mut expect = 0;
                while at < input.len() {
                    let cut = (at + size).min(input.len());
                    let c = &input[at..cut];
                    let budget = p.plain_budget;
                    let (taken, held) = (p.open_taken, p.held_output_bytes());
                    let ev: Vec<Event> = if as_text {
                        p.update(c).unwrap().collect()
                    } else {
                        p.update_bytes(c.as_bytes()).unwrap().collect()
                    };
                    // The opening shape, by the tag list and the chunk's text.
                    let opens = c.find('<').and_then(|k| {
                        let lt = at + k;
                        // A tag's start before its `>`, or any `<` that ends the chunk.
                        let in_tag = tags.iter().any(|&(l, gt)| l == lt && cut <= gt);
                        if !in_tag && cut != lt + 1 {
                            return None;
                        }
                        let head = &c[..k];
                        let plain = head.bytes().all(|b| {
                            (b == b'\t' || (b' '..=b'~').contains(&b)) && !b"<&`".contains(&b)
                        });
                        over += usize::from(plain && k > budget && budget > 0);
                        (plain && k <= budget && budget > 0).then_some(k)
                    });
                    let what = format!("chunks of {size} at {at} ({c:?}, text {as_text})");
                    if let Some(k) = opens {
                        assert_eq!(p.open_taken, taken + 1, "{what}");
                        assert!(ev.is_empty(), "{what}");
                        assert_eq!(p.held_output_bytes(), held + k, "{what}");
                        assert_eq!(p.pending_input_bytes(), c.len() - k, "{what}");
                        expect += 1;
                    } else {
                        assert_eq!(p.open_taken, taken, "{what}");
                    }
                    at = cut;
                    doc.extend(ev);
                }
                doc.extend(p.finish().unwrap());
                assert_eq!(
                    doc,
                    parse(input, config),
                    "chunks of {size}, text {as_text}"
                );
                assert_eq!(p.open_taken, expect);
                total += expect;
            }
        }
        // The path is taken, and the budget turns some chunks away.
        assert!(total > 40 && over > 0, "{total} {over}");
    }

    /// The pooled buffer of each text event's segment (short emissions), as an address.
    fn pooled(events: &[Event]) -> Vec<*const String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Text(s) => match &s.text {
                    SegText::Shared {
                        buf: crate::output::SharedBuf::Pooled(b),
                        ..
                    } => Some(std::sync::Arc::as_ptr(b)),
                    _ => None,
                },
                Event::Marker(_) => None,
            })
            .collect()
    }

    fn text_of(events: &[Event]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Text(s) => Some(s.text()),
                Event::Marker(_) => None,
            })
            .collect()
    }

    #[test]
    fn short_emissions_reuse_the_pooled_buffer_only_once_released() {
        // No recognized tag: text is final as soon as it arrives, one emission per update.
        // (Each is longer than a segment holds inline: decision 89.)
        let (ta, tb, tc) = (
            "Hello, this sentence is a little longer. ",
            "And so is this one, to be copied out. ",
            "The third rewrites the pooled buffer.",
        );
        let mut p = StreamParser::new(&Config::default());
        let a: Vec<Event> = p.update(ta).unwrap().collect();
        let pa = pooled(&a);
        assert_eq!(pa.len(), 1);
        // `a` still holds the pool, so `b` is copied out instead (as a longer emission
        // would be), and `a` is intact.
        let b: Vec<Event> = p.update(tb).unwrap().collect();
        assert!(pooled(&b).is_empty());
        assert_eq!(buffers(&b), [false]);
        assert_eq!(text_of(&a), ta);
        assert_eq!(text_of(&b), tb);
        drop(a);
        // Nothing holds the pool now: the next short emission rewrites it in place.
        let c: Vec<Event> = p.update(tc).unwrap().collect();
        assert_eq!(pooled(&c), pa);
        assert_eq!(text_of(&c), tc);
        assert_eq!(text_of(&b), tb);
        // A document that keeps segments gets the same text as always.
        let mut doc = Document::new();
        doc.extend(c);
        for t in [" More", " text", " here."] {
            doc.extend(p.update(t).unwrap());
        }
        doc.extend(p.finish().unwrap());
        let whole = format!("{tc} More text here.");
        assert_eq!(doc.text(), whole);
        assert_eq!(doc, parse(&whole, &Config::default()));
    }

    /// A token-sized emission (up to `INLINE_TEXT` bytes) is held in its segment: it takes
    /// no pooled or copied buffer, while every earlier event is still held, and the next
    /// longer emission still finds the pool free (decision 89).
    #[test]
    fn token_sized_emissions_are_held_inline() {
        let inline = |events: &[Event]| {
            events.iter().all(|e| match e {
                Event::Text(s) => matches!(s.text, SegText::Inline(_)),
                Event::Marker(_) => true,
            })
        };
        // Text inside a tag that recovers forward is final as it arrives.
        let config = Config::default()
            .with_tags(["answer"])
            .unwrap()
            .with_default_recovery(crate::Strategy::ForwardUntilTag);
        let mut p = StreamParser::new(&config);
        let mut held = Vec::new();
        let mut doc = Document::new();
        let tokens = [
            "<answer>",
            "Größe",
            " × Ω",
            " — a token",
            " and a token of thirty-one byte",
        ];
        for t in tokens {
            let events: Vec<Event> = p.update(t).unwrap().collect();
            assert!(inline(&events), "{t:?}");
            doc.extend(events.iter().cloned());
            held.push(events);
        }
        // Every token but the tag was emitted whole, the last one at the limit.
        assert_eq!(tokens[4].len(), crate::output::INLINE_TEXT);
        assert!(held[1..].iter().all(|e| e.len() == 1));
        let long = " and then a longer piece of text than a segment holds inline";
        let events: Vec<Event> = p.update(long).unwrap().collect();
        assert_eq!(pooled(&events).len(), 1);
        assert_eq!(text_of(&events), long);
        doc.extend(events);
        doc.extend(p.finish().unwrap());
        let whole: String = tokens.concat() + long;
        assert_eq!(doc, parse(&whole, &config));
        assert_eq!(doc.segments().len(), 1);
        // The held events read back as they were emitted.
        let texts: Vec<String> = held.iter().map(|e| text_of(e)).collect();
        assert_eq!(texts[1..].concat(), tokens[1..].concat());
        // `parse()`'s document keeps even a token-sized text in its buffer.
        for input in ["Hi", "<answer>Hi", "<answer>Größe"] {
            let doc = parse(input, &config);
            assert_eq!(doc.segments().len(), 1);
            assert!(doc
                .segments()
                .iter()
                .all(|s| matches!(s.text, SegText::Shared { .. })));
        }
    }

    #[test]
    fn large_emissions_adopt_the_buffer_and_keep_the_rest() {
        let config = Config::default().with_tags(["cite"]).unwrap();
        let big = "Water is wet <cite id=9>.\n".repeat(2000);
        let tail = "This sentence may still get a cite";
        let input = format!("Intro.\n{big}{tail} <cite id=1>. End.");
        let mut p = StreamParser::new(&config);
        // A small emission is copied out: the parser keeps its buffer.
        let first: Vec<Event> = p.update("Intro.\n").unwrap().collect();
        assert_eq!(buffers(&first), [false]);
        // A large one takes the buffer over, with the emitted "Intro." before it and the
        // held line after it, which stays in the parser.
        let chunk = format!("{big}{tail}");
        let second: Vec<Event> = p.update(&chunk).unwrap().collect();
        assert!(buffers(&second).iter().all(|&a| a));
        let emitted: String = second
            .iter()
            .filter_map(|e| match e {
                Event::Text(s) => Some(s.text()),
                Event::Marker(_) => None,
            })
            .collect();
        assert!(emitted.len() > 16 << 10);
        assert!(emitted.starts_with("Water is wet"));
        assert!(!emitted.contains("This sentence"));
        let rest: Vec<Event> = p.update(" <cite id=1>. End.").unwrap().collect();
        let mut doc = Document::new();
        doc.extend(first);
        doc.extend(second);
        doc.extend(rest);
        doc.extend(p.finish().unwrap());
        assert_eq!(doc, parse(&input, &config));
        assert!(doc.text().ends_with(". End."));
        assert!(doc.text().contains(tail));
        // One-shot: one emission at the end, all of it in the adopted buffer.
        let once = parse(&input, &config);
        assert!(once.segments().iter().all(|s| matches!(
            &s.text,
            SegText::Shared { buf, .. } if buf.adopted()
        )));
    }

    #[test]
    fn adoption_at_finish_with_markers_and_multibyte_text() {
        let config = Config::default()
            .with_tags(["note", "todo"])
            .unwrap()
            .with_autoclose_on_any_tag(false);
        let body = "Größe × Ω <todo/>naïve ✓.\n".repeat(800);
        let input = format!("Intro ✓.\n<note>{body}");
        let mut p = StreamParser::new(&config);
        let first: Vec<Event> = p.update("Intro ✓.\n").unwrap().collect();
        assert_eq!(buffers(&first), [false]);
        // The open note's span depends on how it closes: its content is held to the end.
        let held: Vec<Event> = p.update(&format!("<note>{body}")).unwrap().collect();
        assert!(held.is_empty());
        // At the end it is emitted at once, from the parser's own buffer (which still holds
        // the emitted "Intro ✓.\n" before it).
        let last: Vec<Event> = p.finish().unwrap().collect();
        let kinds = buffers(&last);
        assert!(kinds.len() >= 800 && kinds.iter().all(|&a| a));
        let markers = last
            .iter()
            .filter(|e| matches!(e, Event::Marker(_)))
            .count();
        assert_eq!(markers, 800);
        let mut doc = Document::new();
        doc.extend(first);
        doc.extend(last);
        assert_eq!(doc, parse(&input, &config));
        assert!(doc.text().starts_with("Intro ✓.\nGröße × Ω naïve ✓"));
    }

    /// A seeded pseudo-random number below `n` (xorshift), for the queue tests.
    fn roll(state: &mut u64, n: usize) -> usize {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state % n as u64) as usize
    }

    /// Configurations whose postfix tags or open tags let the queue (decision 48) start:
    /// the benches' (compat, `retro_line`: the line regime), the default (`retro_claim`, a
    /// raw tag), short spans in both (the rooms' clip), empty elements as markers (which a
    /// line-start tag leaves where the frontier is), nested mode, no trimming, references
    /// and code off with declarations dropped, and forward self-closing tags.
    fn queue_configs() -> Vec<Config> {
        use crate::config::{Declarations, EmptyElements, SelfClosing};
        use crate::Strategy::{ForwardUntilTag, RetroLine};
        let default = Config::default()
            .with_tags(["cite", "note", "todo", "term"])
            .unwrap()
            .with_raw_tags(["think"])
            .unwrap();
        let compat = Config::kindaxml_compat()
            .with_tags(["cite", "note", "todo"])
            .unwrap()
            .with_recovery("note", ForwardUntilTag)
            .unwrap();
        vec![
            compat.clone(),
            default.clone(),
            compat.clone().with_max_span_bytes(16).unwrap(),
            compat.with_empty_elements(EmptyElements::Marker),
            default.clone().with_max_span_bytes(16).unwrap(),
            default
                .clone()
                .with_autoclose_on_any_tag(false)
                .with_recovery("cite", RetroLine)
                .unwrap()
                .with_recovery("note", ForwardUntilTag)
                .unwrap(),
            default.clone().with_trim_punctuation(false),
            default
                .clone()
                .with_decode_entities(false)
                .with_markdown_code(false)
                .with_declarations(Declarations::Drop),
            default
                .with_self_closing("term", SelfClosing::NextToken)
                .unwrap()
                .with_max_tag_bytes(12)
                .unwrap(),
        ]
    }

    /// Configurations whose tags all recover forward (no `retro_line` or `retro_claim`):
    /// text inside tags is final as it comes, the direct path's case (decision 87).
    fn direct_configs() -> Vec<Config> {
        let forward = Config::default()
            .with_tags(["cite", "note", "todo", "term"])
            .unwrap()
            .with_raw_tags(["think"])
            .unwrap()
            .with_default_recovery(crate::Strategy::ForwardUntilTag);
        vec![
            forward.clone(),
            forward.clone().with_trim_punctuation(false),
            forward
                .with_max_span_bytes(16)
                .unwrap()
                .with_markdown_code(false),
        ]
    }

    /// The queue and the direct path change no event: a parser that takes them emits,
    /// update by update, exactly what one that runs every chunk through the machine emits,
    /// over inputs made of every construct (including the bytes that end a queue: newlines,
    /// `>`, `&`; and non-ASCII text, which byte chunks split), cut at random into 1–9 byte
    /// chunks, as bytes and as text. And both are used.
    #[test]
    fn queued_chunks_emit_what_the_machine_emits_call_by_call() {
        let pieces = [
            "We shipped",
            " it last week",
            " <cite id=1>",
            // (Start tags that let a held line's end join the queue: decision 99.)
            "<cite id=2>",
            " <cite>",
            "<CITE\tn=3>",
            "<cite id=4/>",
            ".",
            ", ",
            " <cite id=\"2 3\">",
            "<cite src=https://x.io/a?b=1>",
            "</cite>",
            "<note>",
            "</note>",
            "<todo/>",
            "<term/>",
            " a < b ",
            "<x",
            "<3",
            "</x>",
            "<b>bold</b>",
            "<cite id='open",
            " > ",
            ">",
            "\n",
            "\n\n",
            "\r\n",
            "&amp;",
            "&#10;",
            "&#x41;",
            "& ",
            "&nbsp",
            "`code <cite>`",
            "``",
            "\n```\n",
            "<![CDATA[x > y]]>",
            "<![CDATA[a",
            "<!-- c -->",
            "<?pi?>",
            "<think>",
            "</think>",
            "日本語",
            "é",
            "\t",
            "( ",
            ") ",
            "   ",
        ];
        // Lines whose first tag is at the line start (an empty retro span: a marker for
        // `empty_elements: marker`) and is closed by a later one on the line.
        let fixed = [
            "<cite id=1>We shipped it <note>n</note> and more.\n<cite id=2>Next <todo/> x <cite id=3>.",
            "Intro.\n<cite>Body text here <cite id=2> tail <note>x</note>.\n",
        ];
        let mut state = common_seed();
        let (mut queued, mut updates, mut direct, mut joined) = (0usize, 0usize, 0usize, 0usize);
        for config in queue_configs().into_iter().chain(direct_configs()) {
            let mut inputs: Vec<(String, Option<usize>)> = Vec::new();
            for f in fixed {
                inputs.extend((1..=9).map(|n| (f.to_string(), Some(n))));
            }
            for _ in 0..160 {
                let mut input = String::new();
                for _ in 0..1 + roll(&mut state, 40) {
                    input.push_str(pieces[roll(&mut state, pieces.len())]);
                }
                inputs.push((input, None));
            }
            for (case, (input, size)) in inputs.into_iter().enumerate() {
                let as_text = case % 2 == 1;
                let mut p = StreamParser::new(&config);
                let mut q = unqueued(&config);
                let mut doc = Document::new();
                // Every annotation emitted so far, by both parsers: one emitted while its tag
                // is open learns how it closed later, and must learn it in the same update.
                let mut seen: Vec<(Annotation, Annotation)> = Vec::new();
                let mut at = 0;
                while at < input.len() {
                    let n = size.unwrap_or_else(|| 1 + roll(&mut state, 9));
                    let mut cut = (at + n).min(input.len());
                    while as_text && !input.is_char_boundary(cut) {
                        cut += 1;
                    }
                    let c = &input.as_bytes()[at..cut];
                    let before = p.queue.len();
                    let (got, want): (Vec<Event>, Vec<Event>) = if as_text {
                        let t = &input[at..cut];
                        (
                            p.update(t).unwrap().collect(),
                            q.update(t).unwrap().collect(),
                        )
                    } else {
                        let got = p.update_bytes(c).unwrap().collect();
                        (got, q.update_bytes(c).unwrap().collect())
                    };
                    assert_eq!(got, want, "{input:?} at {at}..{cut}, text {as_text}");
                    seen.extend(annotations(&got).zip(annotations(&want)));
                    for (a, b) in &seen {
                        assert_eq!(
                            (a.close(), a.span(), a.strategy()),
                            (b.close(), b.span(), b.strategy()),
                            "{input:?} at {at}..{cut}, text {as_text}: {a:?}"
                        );
                    }
                    if p.queue.len() == before + c.len() {
                        queued += 1;
                        assert!(got.is_empty());
                    }
                    // While the queue may take chunks, the plain budgets are 0 (decision
                    // 70): a queued chunk need not clear them.
                    assert!(
                        p.queue_room == 0 || (p.plain_budget == 0 && p.text_budget == 0),
                        "{input:?} at {at}..{cut}: room {}, budgets {} / {}",
                        p.queue_room,
                        p.plain_budget,
                        p.text_budget
                    );
                    assert!(q.queue.is_empty());
                    updates += 1;
                    doc.extend(got);
                    at = cut;
                }
                let (got, want): (Vec<Event>, Vec<Event>) =
                    (p.finish().unwrap().collect(), q.finish().unwrap().collect());
                assert_eq!(got, want, "{input:?} at the end");
                doc.extend(got);
                assert_eq!(doc, parse(&input, &config), "{input:?}");
                direct += p.direct_taken;
                joined += p.line_joined;
            }
        }
        // Not a vacuous comparison: a good share of the chunks waited in the queue, and
        // some took the direct path.
        assert!(
            queued * 10 > updates,
            "{queued} of {updates} updates queued"
        );
        assert!(
            direct * 100 > updates,
            "{direct} of {updates} updates direct"
        );
        assert!(joined > 0, "no held line's end joined the queue");
    }

    /// Feeds `input` in chunks of `size` bytes (as text, each cut at the next char
    /// boundary) to a parser and to one that takes no short path, asserting the same events
    /// call by call and, at the end, the document of `parse`. `each` sees every chunk: its
    /// offset, its bytes, its events, and whether it took the direct path. Returns how
    /// many held lines' ends joined the queue (decision 99).
    fn stream_direct(
        config: &Config,
        input: &str,
        size: usize,
        as_text: bool,
        mut each: impl FnMut(usize, &[u8], &[Event], bool),
    ) -> usize {
        let mut p = StreamParser::new(config);
        let mut q = unqueued(config);
        let mut doc = Document::new();
        let mut at = 0;
        while at < input.len() {
            let mut end = (at + size).min(input.len());
            while as_text && !input.is_char_boundary(end) {
                end += 1;
            }
            let c = &input.as_bytes()[at..end];
            let before = p.direct_taken;
            let (got, want): (Vec<Event>, Vec<Event>) = if as_text {
                let t = std::str::from_utf8(c).unwrap();
                (
                    p.update(t).unwrap().collect(),
                    q.update(t).unwrap().collect(),
                )
            } else {
                (
                    p.update_bytes(c).unwrap().collect(),
                    q.update_bytes(c).unwrap().collect(),
                )
            };
            assert_eq!(got, want, "{size}-byte chunk at {at}: {c:?}");
            each(at, c, &got, p.direct_taken > before);
            doc.extend(got);
            at = end;
        }
        let joined = p.line_joined;
        doc.extend(p.finish().unwrap());
        assert_eq!(doc, parse(input, config), "{size}-byte chunks");
        joined
    }

    /// The end of a held line joins the queue only where that makes no event later
    /// (decision 99): lines of words and postfix cites, some of them with a tag that makes
    /// the line's end emit (an end tag, another tag's start, a self-closing tag, a
    /// reference, a blank line), in chunks of 1 to 9 bytes, as bytes and as text, emit call
    /// by call what a parser that takes no short path emits, under every queue
    /// configuration. And the ends of many lines do join.
    #[test]
    fn held_line_ends_join_the_queue_only_where_nothing_is_final() {
        let words = [
            "We shipped",
            " it",
            " last week.",
            " 日本語",
            " é",
            " (x)",
            ", ",
        ];
        let passing = [" <cite id=1>", "<cite id=2>", " <cite>", "<CITE\tn=3>"];
        let traps = [
            "</cite>",
            "<note>",
            "</note>",
            "<todo/>",
            "<cite id=4/>",
            "&amp;",
            "&#10;",
            "<b>x</b>",
            "<think>",
            "`<cite>`",
            "\n",
        ];
        let mut state = common_seed();
        let (mut joined, mut lines) = (0, 0);
        for config in queue_configs() {
            for case in 0..24 {
                let mut input = String::new();
                for _ in 0..2 + roll(&mut state, 8) {
                    lines += 1;
                    for _ in 0..1 + roll(&mut state, 6) {
                        input.push_str(words[roll(&mut state, words.len())]);
                        if roll(&mut state, 3) == 0 {
                            input.push_str(passing[roll(&mut state, passing.len())]);
                        }
                    }
                    if roll(&mut state, 5) == 0 {
                        input.push_str(traps[roll(&mut state, traps.len())]);
                        input.push_str(words[roll(&mut state, words.len())]);
                    }
                    input.push('\n');
                }
                let size = 1 + case % 9;
                for as_text in [false, true] {
                    joined += stream_direct(&config, &input, size, as_text, |_, _, _, _| {});
                }
            }
        }
        // (A line's end may join in each of the two feeds, under the four configurations
        // whose cites recover `retro_line`; about one in eight does.)
        assert!(joined * 20 > lines, "{joined} joins over {lines} lines");
    }

    /// Tokens of text inside forward tags are emitted as they come, each as the segment
    /// the full path would emit, most of them by the direct path (decision 87): a streamed
    /// `<answer>` with a `<note>` in it, in chunks of 1 to 8 bytes, as bytes and as text. A
    /// chunk takes it when it is plain ASCII and the last update left the machine with
    /// nothing held inside forward tags but a run that trimming might cut off; one that
    /// ends in such a run leaves it held (decision 91).
    #[test]
    fn tokens_inside_forward_tags_are_emitted_directly() {
        let input = "<answer>We shipped it last week, and the error rate went down by half \
                     since then. Costs stayed flat <note>see the dashboard for the numbers \
                     of each region</note> and the rest fell.</answer>";
        let trim = crate::text::is_trim_char;
        let all_trim = |t: &str| t.chars().all(trim);
        for config in direct_configs() {
            let config = config.with_tags(["answer", "note"]).unwrap();
            let (mut spaced, mut spaced_direct) = (0, 0);
            for size in 1..=8 {
                for as_text in [false, true] {
                    // Chunks of letters, digits and spaces (a few are inside the markup,
                    // which never goes straight out).
                    let (mut eligible, mut direct) = (0, 0);
                    stream_direct(&config, input, size, as_text, |_, c, got, took| {
                        let c = std::str::from_utf8(c).unwrap();
                        if took {
                            direct += 1;
                            // At most one segment: the chunk's text after what trimming
                            // might have cut off at the end of the last one, but for a
                            // run at its own end that trimming might cut off.
                            let ok = match got {
                                [] => all_trim(c),
                                [Event::Text(s)] => (0..=c.len()).any(|j| {
                                    let (k, rest) = c.split_at(j);
                                    all_trim(rest)
                                        && (rest.is_empty() || k.ends_with(|ch| !trim(ch)))
                                        && s.text().strip_suffix(k).is_some_and(all_trim)
                                }),
                                _ => false,
                            };
                            assert!(ok, "{size}-byte chunk {c:?}: {got:?}");
                        }
                        if c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b' ') {
                            eligible += 1;
                            if c.ends_with(' ') {
                                spaced += 1;
                                spaced_direct += usize::from(took);
                            }
                        }
                    });
                    // Most plain chunks took it, whatever they end in.
                    assert!(
                        direct * 3 > eligible * 2,
                        "{size}-byte chunks: {direct} of {eligible} direct"
                    );
                }
            }
            // Those that end in a space too (decision 91).
            assert!(
                spaced_direct * 3 > spaced * 2,
                "{spaced_direct} of {spaced} chunks ending in a space direct"
            );
        }
    }

    /// Runs `input` under each of `configs` through [`stream_direct`], in chunks of 1 to 8
    /// bytes as bytes and as text, and asserts that more than three in four of the chunks
    /// that lie within `body` and are `eligible` took the direct path.
    fn assert_mostly_direct(
        configs: impl IntoIterator<Item = Config>,
        input: &str,
        body: std::ops::Range<usize>,
        eligible: impl Fn(&[u8]) -> bool,
    ) {
        for config in configs {
            for size in 1..=8 {
                for as_text in [false, true] {
                    let (mut seen, mut direct) = (0, 0);
                    stream_direct(&config, input, size, as_text, |at, c, _, took| {
                        if body.contains(&at) && body.contains(&(at + c.len() - 1)) && eligible(c) {
                            seen += 1;
                            direct += usize::from(took);
                        }
                    });
                    assert!(
                        direct * 4 > seen * 3,
                        "{size}-byte chunks: {direct} of {seen} direct"
                    );
                }
            }
        }
    }

    /// Non-Latin text streamed inside forward tags takes the direct path too (decision 92):
    /// text chunks of whole characters, and byte chunks that split them (the start of a
    /// character waits in the decoder, and the chunk that completes it is direct as well),
    /// with the same events call by call as the full path, and the document of `parse`.
    /// (The first chunks after a tag go the full way, which finds the state.)
    #[test]
    fn non_latin_tokens_inside_forward_tags_are_emitted_directly() {
        let input = "<answer>世界は広い。Привет, мир — Γειά σου κόσμε; ünïcödé\u{3000}text 🎉 \
                     <note>注意 — проверьте</note> 終わり。</answer>";
        let configs = direct_configs()
            .into_iter()
            .map(|c| c.with_tags(["answer", "note"]).unwrap());
        let body = input.find('世').unwrap()..input.find("<note>").unwrap();
        assert_mostly_direct(configs, input, body, |c| !c.is_ascii());
    }

    /// The content of a raw tag streams out the same way (decision 93): a `<think>` block as
    /// `TagMatcher` configures it (no trimming) and with trimming, in ASCII and non-Latin
    /// text with markup that stays literal inside it, in chunks of 1 to 8 bytes, as bytes and
    /// as text.
    #[test]
    fn raw_content_is_emitted_directly() {
        let input = "<think>We need the numbers first; the report says forty percent \
                     and the <b>graph</b> agrees. 次に数字を確認する。Проверим ещё раз \
                     </think> The answer is yes.";
        let raw = Config::default().with_raw_tags(["think"]).unwrap();
        let body = input.find("We").unwrap()..input.find("</think>").unwrap();
        let plain = |c: &[u8]| {
            c.iter()
                .all(|&b| b >= 0x80 || crate::text::plain_class(b) != 0)
        };
        assert_mostly_direct(
            [raw.clone().with_trim_punctuation(false), raw],
            input,
            body,
            plain,
        );
    }

    /// What a chunk does to an open queue, for every byte alone and inside chunks of every
    /// length the two paths take (a word of 4 to 8 bytes, a slice otherwise), under every
    /// stop mask a flush sets: it joins exactly when none of its bytes stops the queue (a
    /// newline, `>` and `&` when the mask has them). Any other byte joins, non-ASCII
    /// or not UTF-8 at all: the queue is validated when it is fed (decision 68).
    #[test]
    fn chunks_join_the_queue_unless_a_byte_stops_it() {
        use crate::text::{STOP_AMP, STOP_GT, STOP_NL};
        let mut p = StreamParser::new(&Config::default());
        for stop in [
            STOP_NL,
            STOP_NL | STOP_GT,
            STOP_NL | STOP_AMP,
            STOP_NL | STOP_GT | STOP_AMP,
            STOP_GT,
        ] {
            let stops = |b: u8| {
                (b == b'\n' && stop & STOP_NL != 0)
                    || (b == b'>' && stop & STOP_GT != 0)
                    || (b == b'&' && stop & STOP_AMP != 0)
            };
            for len in [1, 2, 3, 4, 5, 8, 9, 15, 16, 17, 24, 31, 32, 40] {
                for b in 0..=255u8 {
                    // The byte at every place of a chunk of `len` bytes of text.
                    for at in [0, len / 2, len - 1] {
                        let mut chunk = vec![b'a'; len];
                        chunk[at] = b;
                        p.queue.clear();
                        p.queue_room = 100;
                        p.set_queue_stop(stop);
                        let joined = p.take_queued(&chunk);
                        let what = format!("byte {b:#x} at {at} of {len}, stop {stop}");
                        assert_eq!(joined, !stops(b), "{what}");
                        if joined {
                            assert_eq!(p.queue.as_slice(), chunk, "{what}");
                            assert_eq!(p.queue_room, 100 - len, "{what}");
                        } else {
                            assert!(p.queue.is_empty() && p.queue_room == 100, "{what}");
                        }
                    }
                }
            }
        }
    }

    /// Byte chunks that split characters, and bytes that are not UTF-8, wait in the queue
    /// (decision 68): a queuing parser returns, call by call, what one that queues nothing
    /// returns, in strict and lossy mode, except that a bad byte that waited in the queue is
    /// reported by the call that ends the wait (or by `finish`) instead of its own: until
    /// then those calls return no event, and the error is the same, at the same offset,
    /// with the same output before it (whether the bad bytes arrive in the chunk that ends
    /// the queue, in a queued one, or end the input inside a character: the error from
    /// `finish`); a `&str` chunk after a queue that ends inside a character is the same
    /// error too. Queues also start inside a character that a chunk through the machine
    /// left incomplete.
    #[test]
    fn queued_byte_chunks_split_characters_and_report_errors_at_the_same_offset() {
        let pieces: [&[u8]; 28] = [
            b"We shipped",
            b" it <cite id=1>",
            b". ",
            b"<note>n</note>",
            "日本語の".as_bytes(),
            "é".as_bytes(),
            "🎉".as_bytes(),
            "\u{3000}".as_bytes(),
            "Производительность ".as_bytes(),
            b"\n",
            b"&amp;",
            b" a > b ",
            b"\xff",
            b"\xe6\x97",
            b"\xf0\x9f\x8e",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"\xf4\x90\x80\x80",
            b"\xe2\x82",
            b"\x80",
            b"x",
            b"   ",
            // Chunks that go through the machine (a newline, a reference, `>`) and end inside
            // a character, so that a queue may start inside it; and the rest of it.
            b"\n\xe6\x97",
            b" &amp; \xe6\x97",
            b" > \xe6\x97",
            b"\xa5 ok",
            // NUL bytes: text, and after a lead byte an error (a word-sized chunk is padded
            // with 0 bytes, so a chunk's own 0 bytes must still be checked).
            b"a\x00b",
            b"ab\xe6\x97\x00",
        ];
        let mut state = common_seed();
        let (mut queued_high, mut split_ends, mut errors, mut late, mut updates) = (0, 0, 0, 0, 0);
        let (mut started_inside, mut queued_long, mut split_joined) = (0, 0, 0);
        let configs = queue_configs();
        type Call = Result<Vec<Event>, Error>;
        for (k, config) in configs.iter().take(4).enumerate() {
            for case in 0..200 {
                let lossy = case % 2 == 1;
                let mut input = Vec::new();
                // Where pieces end: half the cases cut there (a chunk may then be text right
                // after bytes that leave a character incomplete), half at random.
                let mut ends = Vec::new();
                for _ in 0..1 + roll(&mut state, 24) {
                    // Mostly valid text: a bad piece now and then.
                    let i = roll(&mut state, pieces.len());
                    let i = if (12..20).contains(&i) && roll(&mut state, 3) > 0 {
                        4
                    } else {
                        i
                    };
                    input.extend_from_slice(pieces[i]);
                    ends.push(input.len());
                }
                let aligned = case % 4 >= 2;
                let mut p = StreamParser::new(config).with_lossy_utf8(lossy);
                let mut q = unqueued(config).with_lossy_utf8(lossy);
                let (mut doc_p, mut doc_q) = (Document::new(), Document::new());
                // The error the unqueued parser reported, and whether the queuing one has.
                let mut due: Option<Error> = None;
                let mut reported = false;
                let mut at = 0;
                while at < input.len() {
                    let cut = if aligned {
                        ends.iter()
                            .copied()
                            .find(|&e| e > at)
                            .unwrap_or(input.len())
                    } else {
                        // Mostly token-sized; now and then longer.
                        let most = if roll(&mut state, 4) == 0 { 80 } else { 9 };
                        (at + 1 + roll(&mut state, most)).min(input.len())
                    };
                    let c = &input[at..cut];
                    // Now and then a `&str` chunk, where the bytes are one.
                    let text = std::str::from_utf8(c)
                        .ok()
                        .filter(|_| roll(&mut state, 3) == 0);
                    let before = p.queue.len();
                    let (got, want): (Call, Call) = match text {
                        Some(t) => (
                            p.update(t).map(Iterator::collect),
                            q.update(t).map(Iterator::collect),
                        ),
                        None => (
                            p.update_bytes(c).map(Iterator::collect),
                            q.update_bytes(c).map(Iterator::collect),
                        ),
                    };
                    let what = format!("config {k}, {input:?} at {at}..{cut}, lossy {lossy}");
                    match (&due, reported, &got, &want) {
                        (None, _, Ok(events), Err(e)) => {
                            // The unqueued parser stops here; the queuing one took the chunk.
                            assert!(events.is_empty(), "{what}");
                            assert_eq!(p.queue.len(), before + c.len(), "{what}: {e:?}");
                            due = Some(e.clone());
                            late += 1;
                        }
                        (None, _, _, _) => {
                            assert_eq!(got, want, "{what}");
                            if let Err(e) = &want {
                                (due, reported) = (Some(e.clone()), true);
                            }
                        }
                        // Waiting: no event until the error comes, the same one.
                        (Some(_), false, Ok(events), _) => assert!(events.is_empty(), "{what}"),
                        (Some(e), false, Err(g), _) => {
                            assert_eq!(g, e, "{what}");
                            reported = true;
                        }
                        // Both stopped.
                        (Some(_), true, _, _) => assert_eq!(got, want, "{what}"),
                    }
                    if p.queue.len() == before + c.len() && !c.is_ascii() {
                        queued_high += 1;
                        if c.len() > 8 && text.is_none() {
                            queued_long += 1;
                        }
                    }
                    if std::str::from_utf8(p.queue.as_slice())
                        .is_err_and(|e| e.error_len().is_none())
                    {
                        split_ends += 1;
                    }
                    // A flush let the queue take chunks with a character waiting, which
                    // became the queue's head (decision 96).
                    if p.queue_room > 0 && !p.queue.is_empty() && p.queue.len() != before + c.len()
                    {
                        assert!(!p.utf8.has_partial(), "{what}");
                        started_inside += 1;
                    }
                    doc_p.extend(got.unwrap_or_default());
                    doc_q.extend(want.unwrap_or_default());
                    updates += 1;
                    at = cut;
                }
                let what = format!("config {k}, {input:?} at the end, lossy {lossy}");
                let (got, want): (Call, Call) = (
                    p.finish().map(Iterator::collect),
                    q.finish().map(Iterator::collect),
                );
                errors += usize::from(due.is_some() || got.is_err());
                match (&due, reported) {
                    (Some(e), false) => {
                        // Reported by `finish`; a second one ends the input before it.
                        assert_eq!(got.as_ref().err(), Some(e), "{what}");
                        doc_p.extend(p.finish().expect(&what));
                        doc_q.extend(want.expect(&what));
                    }
                    _ => {
                        assert_eq!(got, want, "{what}");
                        if let (Err(_), Err(_)) = (&got, &want) {
                            doc_p.extend(p.finish().expect(&what));
                            doc_q.extend(q.finish().expect(&what));
                        } else {
                            doc_p.extend(got.unwrap_or_default());
                            doc_q.extend(want.unwrap_or_default());
                        }
                    }
                }
                assert_eq!(doc_p, doc_q, "{what}");
                split_joined += p.split_joined;
                if lossy {
                    // Lossy mode replaces what `from_utf8_lossy` replaces, however it is cut.
                    assert!(due.is_none(), "{what}");
                    let whole = String::from_utf8_lossy(&input);
                    assert_eq!(doc_p, parse(&whole, config), "{what}");
                }
            }
        }
        // Not vacuous: non-ASCII chunks waited, queues ended inside characters, errors came,
        // and some after the bad byte waited.
        assert!(queued_high * 20 > updates, "{queued_high} of {updates}");
        assert!(queued_long * 100 > updates, "{queued_long} of {updates}");
        assert!(split_ends * 50 > updates, "{split_ends} of {updates}");
        assert!(errors > 100, "{errors}");
        assert!(late > 20, "{late}");
        assert!(started_inside > 20, "{started_inside}");
        // Release builds feed a chunk that ends inside a character with the queue (debug
        // builds never join: `feed_queue_and`).
        if !cfg!(debug_assertions) {
            assert!(split_joined > 20, "{split_joined}");
        }
    }

    /// What the queue takes of LLM-like prose in 4-byte chunks. Under `retro_line` (the
    /// benches' configuration) the line is held whole, so once it has a kept char every
    /// chunk up to the newline waits unparsed, tags included; under `retro_claim` a chunk
    /// holding a `>` goes through the machine (a claim can make text before it final).
    /// While a retro tag that is still open pins the frontier, only a tag can end the
    /// wait: the newline after the line's last cite waits too (decision 95). A queued
    /// chunk emits nothing and counts as pending input; the chunk that ends the queue
    /// parses it.
    #[test]
    fn prose_tokens_wait_in_the_queue_until_a_line_or_tag_ends() {
        let input = "We shipped the sync engine <cite id=1>, and crash reports fell by \
                     40% <cite id=2>. Plain prose follows, with no tags at all.\nNext line.";
        let newline = input.find('\n').unwrap();
        let configs = queue_configs();
        for (config, line_held) in [(&configs[0], true), (&configs[1], false)] {
            let mut p = StreamParser::new(config);
            let mut doc = Document::new();
            let mut queued = Vec::new();
            let mut newline_queued = false;
            for (i, c) in input.as_bytes().chunks(4).enumerate() {
                let pending = p.pending_input_bytes();
                let held = p.held_output_bytes();
                let ev: Vec<Event> = p.update_bytes(c).unwrap().collect();
                if !p.queue.is_empty() {
                    // Queued: nothing emitted, nothing parsed; a newline only after the
                    // line's last cite, which is still open.
                    assert!(ev.is_empty());
                    if c.contains(&b'\n') {
                        assert_eq!(p.queue_stop, crate::text::STOP_GT);
                        newline_queued = true;
                    }
                    assert!(line_held || !c.contains(&b'>'));
                    assert_eq!(p.pending_input_bytes(), pending + c.len());
                    assert_eq!(p.held_output_bytes(), held);
                    queued.push(i);
                }
                doc.extend(ev);
            }
            doc.extend(p.finish().unwrap());
            assert_eq!(doc, parse(input, config));
            // The first chunk waits for a kept char on the line (nothing is held before it).
            assert!(!queued.contains(&0));
            let line: Vec<usize> = (1..newline / 4).collect();
            if line_held {
                // Every chunk of the line after the first, up to the newline.
                assert_eq!(queued[..line.len()], line[..]);
            } else {
                // Not the chunks that end a tag, nor the one after each cite (the cite
                // waits for its first char), and the rest of the line is.
                let tags = input[..newline].matches('>').count();
                assert!(queued.len() >= line.len() - 3 * tags, "{queued:?}");
                let chunks: Vec<&[u8]> = input.as_bytes().chunks(4).collect();
                assert!(queued.iter().all(|&i| !chunks[i].contains(&b'>')));
                // `<cite id=2>` is open to the end: the newline waits with the rest.
                assert!(newline_queued);
            }
        }
    }

    /// While an open `retro_*` tag pins the frontier, only a tag's end ends the wait
    /// (decision 95): the lines after a line's last cite wait unparsed, newlines included,
    /// until the next tag, under `retro_line` (after the newline that ends the cite's
    /// line, which the held line stops at) and under `retro_claim` (from the cite on). The
    /// events are the full path's, call by call (`queued_chunks_emit_what_the_machine_emits_call_by_call`).
    #[test]
    fn lines_wait_while_a_retro_tag_pins() {
        let input = "We shipped it <cite id=1>.\nMore text here, no tags\nand a third line\n\
                     <cite id=2>.";
        let second = input.find("More").unwrap();
        let next_tag = input.find("<cite id=2").unwrap();
        let configs = queue_configs();
        for config in [&configs[0], &configs[1]] {
            let mut p = StreamParser::new(config);
            let mut doc = Document::new();
            let mut at = 0;
            for c in input.as_bytes().chunks(4) {
                let ev: Vec<Event> = p.update_bytes(c).unwrap().collect();
                // The chunks after the first line, up to the next tag's start.
                if at > second && at + c.len() <= next_tag {
                    assert!(!p.queue.is_empty(), "{c:?} at {at}");
                    assert!(ev.is_empty());
                }
                at += c.len();
                doc.extend(ev);
            }
            doc.extend(p.finish().unwrap());
            assert_eq!(doc, parse(input, config));
        }
    }

    /// The flat emission (decisions 102 and 110) gives what the general one gives: every
    /// configuration of `queue_configs`, seeded random inputs of tags (spans side by side,
    /// nested, crossing; markers inside and between spans, at their ends and starts;
    /// unclosed and stray tags) and text, parsed whole and streamed in random chunks, with
    /// the flat path allowed and with it off. The documents must be equal, and so must
    /// the streams' events, one by one (the flat path cuts segments at markers as the
    /// general one does). The flat path must be taken in both `parse()` and the streams.
    #[test]
    fn the_flat_emission_gives_what_the_general_one_gives() {
        let pieces = [
            "<cite id=1>",
            "</cite>",
            " <cite>",
            "<note>",
            "</note>",
            "<todo/>",
            "<todo id=2 owner=\"ana\"/>",
            "<term/>",
            "<b>",
            "</x>",
            "We shipped",
            " it",
            " last week",
            ".",
            ", ",
            " 日本語",
            "\n",
            "\n\n",
            "&amp;",
            "<![CDATA[a<b]]>",
            "<think>",
            "</think>",
        ];
        let mut state = common_seed();
        let (mut flat_parse, mut flat_stream) = (0, 0);
        for config in queue_configs() {
            for case in 0..1000 {
                let mut input = String::new();
                for _ in 0..1 + roll(&mut state, 24) {
                    input.push_str(pieces[roll(&mut state, pieces.len())]);
                }
                let general = || {
                    let mut p = StreamParser::new(&config);
                    p.builder.general_only = true;
                    p
                };
                let mut whole = StreamParser::new(&config);
                let doc = parse_with(&mut whole, &input);
                assert_eq!(doc, parse_with(&mut general(), &input), "{input:?}");
                flat_parse += whole.builder.flat_taken;
                let size = 1 + case % 7;
                let (mut a, mut b) = (StreamParser::new(&config), general());
                let (mut ea, mut eb) = (Vec::new(), Vec::new());
                for c in input.as_bytes().chunks(size) {
                    ea.extend(a.update_bytes(c).unwrap());
                    eb.extend(b.update_bytes(c).unwrap());
                }
                ea.extend(a.finish().unwrap());
                eb.extend(b.finish().unwrap());
                assert_eq!(ea, eb, "{input:?} in chunks of {size}");
                assert_eq!(Document::from_events(ea), doc, "{input:?}");
                flat_stream += a.builder.flat_taken;
                assert_eq!(b.builder.flat_taken, 0);
            }
        }
        // (About two in three parses take it, at their one emission, and more in chunks.)
        assert!(
            flat_parse > 4000 && flat_stream > 8000,
            "{flat_parse} / {flat_stream}"
        );
    }

    /// The seed of the random tests (`KXS_SEED` overrides it).
    fn common_seed() -> u64 {
        std::env::var("KXS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x6b78_6d6c)
            | 1
    }
}

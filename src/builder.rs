//! The structure half of the machine: open tags, recovered spans, and the *frontier* up to
//! which output is final.
//!
//! The tokenizer calls [`Builder::text`] with output text and the `*_tag` methods with
//! markup. Output positions are byte offsets into the output text. Output before the
//! frontier `F` is final and is emitted as [`Event`]s; output in `[F, out_len)` is held.
//!
//! # The frontier
//!
//! A byte is final once no span that could still be created can cover it. `F` is the minimum
//! of:
//! - for each open tag, the first position its eventual span is not yet sure about
//!   (`fixed_u`, kept as a prefix minimum over the open list, or the global `kept_end` for
//!   forward tags whose content so far is surely covered up to its trailing trimmable run);
//! - where some recognized tag recovers with `retro_line`: the first kept character at or
//!   after `max(line start, out_len - max_span_bytes)` (a later postfix tag may claim it);
//! - where some recognized tag recovers with `retro_claim`: the same from after the previous
//!   `retro_claim` tag's last markup on the line, or that tag's span while a new tag could
//!   still fall back to it.
//!
//! `F` never decreases, and every span is created at or after it, so emitted events are
//! final. Content of an open forward tag before `F` is emitted with the tag's annotation
//! (a *virtual* span `[p, F)`: its final span surely covers it). Inside a segment,
//! annotations are ordered by span start, then longer span first, then the order the tags
//! opened; so that this order is known when such content is emitted, a forward tag whose
//! start is shared with another span or open tag (nested mode only) is never emitted early.
//!
//! Every quantity above is maintained incrementally: each output byte is examined a bounded
//! number of times whatever the chunking, and held text is never rescanned.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use crate::config::{Rules, SelfClosing, Strategy};
use crate::output::{
    Annotation, Attrs, Close, Document, Event, Marker, SegAnnotations, SegText, Segment, SharedBuf,
    INLINE_TEXT,
};
use crate::text::{
    ceil_boundary, first_kept, floor_boundary, is_trim_char, last_kept_end, plain_class,
};

/// Span a `retro_*` tag would get if closed by recovery, computed when it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rec {
    /// The span (or no annotation).
    Span(Option<(usize, usize)>),
    /// `retro_claim` fallback to the final span of an open tag, clipped to start at `clip`.
    Fallback { target: u64, clip: usize },
}

/// An annotation waiting for an open tag's final span (a `retro_claim` fallback).
#[derive(Debug)]
struct Dependent {
    ann: Annotation,
    seq: u64,
    /// Output position of its tag.
    p: usize,
    clip: usize,
}

#[derive(Debug)]
struct OpenTag {
    /// Open order; also the tie-break of annotation order.
    id: u64,
    tag: usize,
    ann: Annotation,
    p: usize,
    strategy: Strategy,
    rec: Rec,
    /// First kept (non-trimmable) char at or after `p`.
    first_kept: Pos,
    /// First newline at or after `p`, and the kept end just before it.
    first_nl: Pos,
    kept_end_at_nl: usize,
    /// First run of alphanumerics at or after `p` (`forward_next_token`).
    tok_start: Pos,
    tok_end: Pos,
    /// Annotations waiting for this tag's final span. Boxed, 8 bytes instead of a `Vec`'s
    /// 24: they are rare, and the tag is moved on every open and close (decision 80).
    #[allow(clippy::box_collection)]
    dependents: Option<Box<Vec<Dependent>>>,
    /// First output position whose coverage by this tag is still undecided (`usize::MAX`:
    /// none, or see `dyn_kept`).
    fixed_u: usize,
    /// Undecided from the global `kept_end` on (a forward tag whose content so far starts
    /// with a kept char: only its trailing trimmable run is undecided).
    dyn_kept: bool,
    /// `min(fixed_u)` over this tag and every older open tag.
    prefix_min: usize,
    /// Another span or open tag starts where this one does: its content is never emitted
    /// before it closes (the annotation order would depend on how both end).
    shared: bool,
    /// An E5 self-closing tag: closed only by recovery, never by an end tag or a reopen.
    e5: bool,
}

/// An output position, or none: an `Option<usize>` in 8 bytes instead of 16 (positions are
/// below `usize::MAX`, the length of no output), so that an [`OpenTag`] fits in 128 bytes,
/// which a move copies inline rather than by a call to `memcpy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pos(usize);

impl Pos {
    const NONE: Pos = Pos(usize::MAX);

    fn some(p: usize) -> Pos {
        debug_assert!(p != usize::MAX, "an output position of usize::MAX");
        Pos(p)
    }

    fn get(self) -> Option<usize> {
        (self.0 != usize::MAX).then_some(self.0)
    }
}

/// The last `retro_claim` markup seen.
#[derive(Debug, Clone, Copy)]
struct LastClaim {
    /// Output position right after it.
    end: usize,
    span: ClaimSpan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClaimSpan {
    /// The tag's final span is that of this open tag.
    Open(u64),
    Closed(Option<(usize, usize)>),
}

/// "First kept char at or after x" for non-decreasing x, scanning each held byte once.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    at: usize,
    found: bool,
}

/// A finished span waiting to be emitted.
#[derive(Debug)]
struct PSpan {
    start: usize,
    end: usize,
    seq: u64,
    ann: Annotation,
}

impl PSpan {
    fn key(&self) -> (usize, std::cmp::Reverse<usize>, u64) {
        (self.start, std::cmp::Reverse(self.end), self.seq)
    }
}

/// How a tag's final span is known when it closes.
enum Resolution {
    Known(Option<(usize, usize)>),
    /// Waiting on the open tag at this index (retro_claim fallback).
    Deferred(usize, usize),
}

#[derive(Debug)]
pub(crate) struct Builder {
    rules: Arc<Rules>,
    /// `held[held_off..]` is the output in `[held_start, out_len)`.
    held: String,
    held_off: usize,
    held_start: usize,
    out_len: usize,
    /// Output before this has been through [`settle`](Builder::settle); the text of
    /// `[settled, out_len)` is appended but not yet looked at (decision 73).
    settled: usize,
    line_start: usize,
    /// End of the last kept char of the output (0 if none).
    kept_end: usize,
    open: VecDeque<OpenTag>,
    open_count: Vec<u32>,
    next_id: u64,
    /// Open tags with `id >= kept_from` have not seen a kept char yet.
    kept_from: u64,
    /// Open tags with `id >= nl_from` have not seen a newline yet.
    nl_from: u64,
    tok_wait: VecDeque<u64>,
    tok_run: VecDeque<u64>,
    n_dyn: usize,
    last_claim: Option<LastClaim>,
    line_cur: Cursor,
    claim_cur: Cursor,
    started: Vec<PSpan>,
    pending: VecDeque<PSpan>,
    markers: VecDeque<Marker>,
    /// Scratch list of `emit_range`, kept for its capacity.
    cur_buf: Vec<usize>,
    /// The annotations of `open`, in order, once an emission has needed them as a list;
    /// dropped whenever a tag opens or closes (see `emit_inside_open`).
    open_list: Option<Arc<[Annotation]>>,
    /// The buffer of the last emission of up to `POOL_MAX` bytes, rewritten by the next one
    /// once no event holds it (decisions 31 and 69); none until the first.
    pool: Option<Arc<String>>,
    pub(crate) events: Vec<Event>,
    /// Changed since the last flush (a flush of an unchanged builder emits nothing).
    dirty: bool,
    /// Emissions take the general path only, never the flat one (for tests).
    #[cfg(test)]
    pub(crate) general_only: bool,
    /// Emissions the flat path took (for tests).
    #[cfg(test)]
    pub(crate) flat_taken: usize,
}

impl Builder {
    pub(crate) fn new(rules: Arc<Rules>) -> Self {
        let n = rules.tags.len();
        Builder {
            rules,
            held: String::new(),
            held_off: 0,
            held_start: 0,
            out_len: 0,
            settled: 0,
            line_start: 0,
            kept_end: 0,
            open: VecDeque::new(),
            open_count: vec![0; n],
            next_id: 0,
            kept_from: 0,
            nl_from: 0,
            tok_wait: VecDeque::new(),
            tok_run: VecDeque::new(),
            n_dyn: 0,
            last_claim: None,
            line_cur: Cursor::default(),
            claim_cur: Cursor::default(),
            started: Vec::new(),
            pending: VecDeque::new(),
            markers: VecDeque::new(),
            cur_buf: Vec::new(),
            open_list: None,
            pool: None,
            events: Vec::new(),
            dirty: false,
            #[cfg(test)]
            general_only: false,
            #[cfg(test)]
            flat_taken: 0,
        }
    }

    /// Room for `n` more bytes of output text (a hint from a caller that knows the input).
    pub(crate) fn reserve_text(&mut self, n: usize) {
        self.held.reserve(n);
    }

    /// Room for `n` bytes of output text if the buffer has none yet: a new stream's first
    /// text takes it in one step instead of doubling from 8 bytes (decision 62). The event
    /// list takes room for a few events then too, instead of growing from 0 by reallocating
    /// (decision 90).
    pub(crate) fn reserve_first_text(&mut self, n: usize) {
        if self.held.capacity() == 0 {
            self.held.reserve(n);
            self.events.reserve(EVENTS_FIRST);
        }
    }

    /// Whether a span or marker waits to be emitted (or an open tag to close).
    pub(crate) fn has_annotations_pending(&self) -> bool {
        !(self.pending.is_empty()
            && self.started.is_empty()
            && self.markers.is_empty()
            && self.open.is_empty())
    }

    /// Output bytes produced so far.
    pub(crate) fn out_len(&self) -> usize {
        self.out_len
    }

    /// At a line start with everything emitted and nothing open or waiting: what a new
    /// builder is, up to positions (see `StreamParser::is_restartable`). The fields this
    /// does not compare cannot change what comes next from here:
    /// - `last_claim` ends before the line start, and every use of it asks for one on the
    ///   current line (`claim_anchor`, `open_tag`, `frontier_of`); no tag is open for its
    ///   `ClaimSpan::Open` to name;
    /// - `kept_end` (and an open tag's copy at its newline) is read only once a kept char
    ///   follows the position it is compared with, and that char sets it;
    /// - `kept_from` and `nl_from` are at most `next_id`, so the next tag has seen neither a
    ///   kept char nor a newline, as in a new builder; ids are compared only with each other;
    /// - the cursors are caches of "first kept char at or after x", rescanned for any `x`
    ///   past them; `clip` measures back from a tag no further than `held_start`;
    /// - `pool`, `cur_buf`, `open_list` and `dirty` hold buffers and caches only.
    ///
    /// Unread text (`settled` short of `out_len`, decision 73) answers `false`.
    pub(crate) fn at_fresh_line(&self) -> bool {
        self.held_start == self.out_len
            && self.settled == self.out_len
            && self.line_start == self.out_len
            && self.open.is_empty()
            && self.started.is_empty()
            && self.pending.is_empty()
            && self.markers.is_empty()
            && self.tok_wait.is_empty()
            && self.tok_run.is_empty()
            && self.n_dyn == 0
            && self.events.is_empty()
            && self.last_claim.is_none_or(|lc| lc.end < self.line_start)
    }

    /// Output bytes held back (not yet emitted).
    pub(crate) fn held_len(&self) -> usize {
        self.out_len - self.held_start
    }

    // ----------------------------------------------------------------- text

    /// Appends plain ASCII text (`text::PLAIN_CLASS`; `kept` as `text::plain_ascii_prefix`
    /// gives it) exactly as [`text`](Builder::text) would, when that only appends and moves
    /// `kept_end`: no newline (plain text has none), no open tag still waiting for its first
    /// char, first kept char or first token, and no `max_span_bytes` limit reached. Returns
    /// `false` (doing nothing) otherwise.
    #[inline]
    pub(crate) fn push_plain(&mut self, b: &[u8], kept: usize) -> bool {
        self.settle();
        if b.is_empty() || self.plain_room().is_none_or(|room| b.len() > room) {
            return false;
        }
        self.append_plain(b, kept);
        true
    }

    /// Whether plain text appended now ([`push_plain`](Builder::push_plain)) is final as soon
    /// as it is appended, but for a trailing run that trimming might cut off: no
    /// `retro_line` or `retro_claim` tag may claim it, no span or marker waits, every open
    /// tag has its coverage decided (`prefix_min` is `usize::MAX`: forward tags past their
    /// first kept char), the text would only be appended (`plain_room`), and nothing is
    /// held but such a run (`kept_end`), which a kept char in the text makes inner. Then
    /// the frontier is the end of the output once the text is in, or the end of its last
    /// kept char while trimming may still cut a run off, and the emission is one segment
    /// annotated by the open tags ([`emit_inside_open`]): [`flush_direct`]. The state after
    /// it is one this describes again. Valid right after a `flush` (decisions 87 and 91).
    ///
    /// [`emit_inside_open`]: Builder::emit_inside_open
    /// [`flush_direct`]: Builder::flush_direct
    pub(crate) fn direct_ready(&self) -> bool {
        // (A flush leaves the text settled and the builder clean.)
        debug_assert!(
            self.settled == self.out_len && !self.dirty,
            "asked before a flush"
        );
        !self.rules.uses_retro_line
            && !self.rules.uses_retro_claim
            && (self.held_start == self.out_len
                || (self.n_dyn > 0 && self.kept_end <= self.held_start))
            && self.started.is_empty()
            && self.pending.is_empty()
            && self.markers.is_empty()
            && self.open.back().is_none_or(|t| t.prefix_min == usize::MAX)
            && self.plain_room().is_some()
    }

    /// [`flush`](Builder::flush) after plain text was appended in the state
    /// [`direct_ready`](Builder::direct_ready) describes: the frontier is the end of the
    /// output, or, while a forward tag waits on trimming (`n_dyn`), the end of the last
    /// kept char; everything before it goes out as one segment, with no frontier to work
    /// out. A trailing run that trimming might cut off stays held, as `direct_ready`
    /// allows (decision 91).
    pub(crate) fn flush_direct(&mut self) {
        debug_assert_eq!(self.settled, self.out_len, "direct text unsettled");
        self.dirty = false;
        let f = if self.n_dyn > 0 {
            self.kept_end.min(self.out_len)
        } else {
            self.out_len
        };
        debug_assert_eq!(
            self.frontier_of(self.line_cur, self.claim_cur).0,
            f,
            "direct text not final"
        );
        let emitted = self.emit_inside_open(f, false, &mut ToEvents);
        debug_assert!(
            emitted || f <= self.held_start,
            "direct text not one segment"
        );
    }

    /// Bytes of plain text that [`push_plain`](Builder::push_plain) takes now.
    pub(crate) fn plain_room_now(&self) -> usize {
        self.plain_room().unwrap_or(0)
    }

    /// How many bytes of plain text [`text`](Builder::text) would only append (moving
    /// `kept_end`): plain text has no newline; no open tag may wait on its first char, first
    /// kept char or first token; and the text must stay short of the `max_span_bytes` limit
    /// of the oldest open tag. `None` if an open tag waits.
    #[inline]
    fn plain_room(&self) -> Option<usize> {
        let (Some(front), Some(back)) = (self.open.front(), self.open.back()) else {
            return Some(usize::MAX);
        };
        if back.p == self.out_len
            || back.id >= self.kept_from
            || !self.tok_wait.is_empty()
            || !self.tok_run.is_empty()
        {
            return None;
        }
        // Invariant: out_len < front.p + max_span, and `text` cuts at that limit.
        Some(front.p.saturating_add(self.rules.max_span_bytes) - self.out_len - 1)
    }

    /// The append of [`push_plain`](Builder::push_plain), once its conditions hold.
    #[inline]
    pub(crate) fn append_plain(&mut self, b: &[u8], kept: usize) {
        if b.is_empty() {
            return;
        }
        self.settle();
        self.held.reserve(b.len());
        for &c in b {
            // Plain bytes are ASCII; the mask lets the compiler see a one-byte char.
            self.held.push(char::from(c & 0x7f));
        }
        self.appended_ascii(b.len(), kept);
    }

    /// The bookkeeping after `n` plain ASCII bytes were pushed onto `held`, `kept` being the
    /// end of the last one trimming keeps (0 if none): what `settle` works out for text.
    #[inline]
    fn appended_ascii(&mut self, n: usize, kept: usize) {
        let kept = if self.rules.trim {
            (kept > 0).then_some(kept)
        } else {
            Some(n)
        };
        self.appended(n, kept);
    }

    /// The bookkeeping after `n` plain bytes were pushed onto `held`, `kept` being the end
    /// of the last char trimming keeps among them.
    #[inline]
    fn appended(&mut self, n: usize, kept: Option<usize>) {
        if n == 0 {
            return;
        }
        // Settled before the append (every caller's entry point settles), and read here.
        debug_assert_eq!(self.settled, self.out_len, "plain text appended unsettled");
        let start = self.out_len;
        self.out_len += n;
        self.settled = self.out_len;
        if let Some(k) = kept {
            self.kept_end = start + k;
        }
        self.dirty = true;
    }

    /// [`append_plain`](Builder::append_plain) of `b` if it is plain text
    /// (`text::PLAIN_CLASS`), classifying and appending in one pass; returns `false` (with
    /// nothing appended) if it is not.
    #[inline]
    pub(crate) fn try_append_plain(&mut self, b: &[u8]) -> bool {
        self.settle();
        if let &[c] = b {
            // One byte (a token stream cut into bytes): no loop to set up or undo.
            let class = plain_class(c);
            if !matches!(class, 1 | 2) {
                return false;
            }
            self.held.push(char::from(c & 0x7f));
            self.appended_ascii(1, usize::from(class == 1));
            return true;
        }
        let len0 = self.held.len();
        let mut kept = 0;
        for (i, &c) in b.iter().enumerate() {
            match plain_class(c) {
                1 => kept = i + 1,
                2 => {}
                _ => {
                    self.held.truncate(len0);
                    return false;
                }
            }
            self.held.push(char::from(c & 0x7f));
        }
        self.appended_ascii(b.len(), kept);
        true
    }

    /// [`try_append_plain`](Builder::try_append_plain) of a token, `s` being `chunk` as
    /// text if known: with one copy from text of `PLAIN_COPY_MIN` bytes or more
    /// ([`try_append_plain_str`](Builder::try_append_plain_str)), else a char at a time.
    #[inline(always)]
    pub(crate) fn try_append_plain_token(&mut self, chunk: &[u8], s: Option<&str>) -> bool {
        match s {
            Some(s) if s.len() >= PLAIN_COPY_MIN => self.try_append_plain_str(s),
            _ => self.try_append_plain(chunk),
        }
    }

    /// [`try_append_plain`](Builder::try_append_plain) of a chunk that comes as text:
    /// classified in a pass that only reads, then appended with one copy (for
    /// `PLAIN_COPY_MIN` bytes or more, cheaper than the char-at-a-time loop, which the
    /// bytes of an `update_bytes` chunk need: making them a `&str` costs more than both).
    #[inline]
    pub(crate) fn try_append_plain_str(&mut self, s: &str) -> bool {
        let (len, kept) = crate::text::plain_ascii_prefix(s.as_bytes());
        if len != s.len() {
            return false;
        }
        self.settle();
        self.held.push_str(s);
        self.appended_ascii(len, kept);
        true
    }

    /// [`append_plain`](Builder::append_plain) for plain text with non-ASCII characters
    /// (`text::plain_str`): `head` (a character completed across chunks, if any) then
    /// `body`, within the [`plain_budget`](Builder::plain_budget) left by the last flush.
    /// The budget implies the conditions of [`push_plain`](Builder::push_plain) (it is at
    /// most their room when computed, and appends shrink both alike), so they are not
    /// tested again. Returns `false` (doing nothing) if there is no text.
    #[inline]
    pub(crate) fn append_plain_str(&mut self, head: Option<char>, body: &str) -> bool {
        let h = head.map_or(0, char::len_utf8);
        let n = h + body.len();
        if n == 0 {
            return false;
        }
        self.settle();
        debug_assert!(
            self.plain_room().is_some_and(|room| n <= room),
            "plain budget beyond the room for plain text"
        );
        // The end of the last kept char: in the body, else the head's.
        let kept = match self.last_kept_end_in(body) {
            Some(k) => Some(h + k),
            None => head.filter(|&c| self.is_kept(c)).map(|_| h),
        };
        if let Some(c) = head {
            self.held.push(c);
        }
        self.held.push_str(body);
        self.appended(n, kept);
        true
    }

    /// How many more bytes of plain text (`text::PLAIN_CLASS`) [`append_plain`] can take
    /// with no other effect, so that a [`flush`](Builder::flush) after them would emit
    /// nothing and change nothing. Valid right after a `flush`, until anything other than
    /// `append_plain` changes the builder; 0 where that cannot be shown cheaply.
    ///
    /// The frontier is `max(held_start, min(terms))`, so a `flush` stays a no-op while some
    /// term stays at or before `held_start` (markers at or before it were emitted with it).
    /// Two terms do under plain text, the common cases of LLM prose:
    /// - the open list's prefix minimum: an open tag's undecided position changes only with
    ///   its first char, a newline, a token scan, or a tag (none of which plain text is, by
    ///   the conditions of `push_plain`);
    /// - the first kept char of the current line while a `retro_line` tag is recognized (or,
    ///   for `retro_claim`, the first kept char after the last claim on the line), once found:
    ///   plain text has no newline and no markup, so the cursor answers the same for as long
    ///   as `clip(out_len)` stays at or before it.
    ///
    /// (Cursors that are not queried meanwhile answer the same later: they scan on from
    /// where they stopped.)
    ///
    /// [`append_plain`]: Builder::append_plain
    pub(crate) fn plain_budget(&mut self) -> usize {
        self.settle();
        let Some(budget) = self.plain_room() else {
            return 0;
        };
        if self
            .open
            .back()
            .is_some_and(|back| back.prefix_min <= self.held_start)
        {
            return budget;
        }
        if self
            .markers
            .front()
            .is_some_and(|m| m.pos <= self.held_start)
        {
            return 0;
        }
        if let Some(b) = self.line_pin_room() {
            return budget.min(b);
        }
        if self.rules.uses_retro_claim {
            // The claim term is the cursor's answer while that is before `out_len`.
            if let Some(b) = self.pin_room(self.claim_cur, self.claim_anchor(self.out_len)) {
                return budget.min(b);
            }
        }
        0
    }

    /// A found cursor at `held_start`, queried from `x` at or before it, pins the frontier
    /// there: it answers the same while `clip(p) <= cur.at`, i.e. for `p` up to `cur.at +
    /// max_span` (`cur.at` is a char boundary at or after `held_start`). The room left to
    /// that, if it pins.
    fn pin_room(&self, cur: Cursor, x: usize) -> Option<usize> {
        (cur.found && cur.at == self.held_start && cur.at < self.out_len && x <= cur.at).then(
            || {
                cur.at
                    .saturating_add(self.rules.max_span_bytes)
                    .saturating_sub(self.out_len)
            },
        )
    }

    /// While a `retro_line` tag is recognized and the first kept char of the current line
    /// is at `held_start` (so a postfix tag could still claim everything from there): how
    /// much more output may come before `clip` passes that char. Valid right after a
    /// `flush`. Until then the frontier stays where it is whatever arrives but a newline:
    /// text moves neither the line start nor the cursor, and neither do tags, which query
    /// the cursor from the same line start (or a later clip, within that room). A tag's
    /// marker lands at its own position: a self-closing one's is past `held_start`, and so
    /// is that of an empty element (`empty_elements: marker`) unless an open tag is at or
    /// before `held_start` (the oldest is the first), whose closing would put one where the
    /// frontier is. `None` otherwise.
    pub(crate) fn line_pin_room(&mut self) -> Option<usize> {
        self.settle();
        let at_or_before = |p: usize| p <= self.held_start;
        if !self.rules.uses_retro_line
            || self.markers.front().is_some_and(|m| at_or_before(m.pos))
            || (self.rules.empty_markers && self.open.front().is_some_and(|t| at_or_before(t.p)))
        {
            return None;
        }
        let x = self.line_start.max(self.clip(self.out_len));
        self.pin_room(self.line_cur, x)
    }

    /// Whether an open `retro_line` or `retro_claim` tag pins the frontier at or before
    /// `held_start` (the plain budget's first case): the oldest tag whose prefix minimum
    /// reaches `held_start`, whose own `fixed_u` is then that minimum, is such a one. A
    /// retro tag's undecided position (`fixed_u`) is set when it opens and moves only when
    /// a tag opens or closes (or text reaches its span limit, which the plain budget stops
    /// short of); no char, newline or reference moves it, and tags opened after it only
    /// lower the minimum. So nothing becomes final before a tag ends (decision 95). A
    /// binary search (the prefix minimum never grows along the list): inside `d` open tags
    /// a flush pays `log d`, not `d` (decision 29). Valid right after a `flush`.
    pub(crate) fn retro_pins(&self) -> bool {
        let pin = self
            .open
            .partition_point(|t| t.prefix_min > self.held_start);
        self.open
            .get(pin)
            .is_some_and(|t| matches!(t.strategy, Strategy::RetroLine | Strategy::RetroClaim))
    }

    /// Whether a tag is open.
    pub(crate) fn has_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// Whether an open tag started before `held_start`: then text it covers may have been
    /// emitted with its annotation, which learns how the tag closes (`Annotation::close`)
    /// when the machine reads the markup that closes it, or the text that reaches its span
    /// limit. An open tag at or after `held_start` has had nothing emitted yet.
    pub(crate) fn open_before_frontier(&self) -> bool {
        self.open.front().is_some_and(|t| t.p < self.held_start)
    }

    /// Appends output text. Only appends: what the text means for the open tags (their
    /// first char, first kept char, first token and first newline) and for the line and
    /// trimming positions is worked out by [`settle`](Builder::settle), once, for all the
    /// text appended before the next tag, query or flush (decision 73).
    // Bounds: `cut` is a char boundary of `s` (floor_boundary) and <= s.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn text(&mut self, mut s: &str) {
        self.dirty = true;
        while !s.is_empty() {
            if let Some(front) = self.open.front() {
                // Invariant: out_len < front.p + max_span for every open tag. (Settling
                // moves no tag: `front` is the one it would be after it.)
                let limit = front.p.saturating_add(self.rules.max_span_bytes);
                let room = limit - self.out_len;
                if s.len() >= room {
                    let cut = floor_boundary(s, room);
                    if cut > 0 {
                        self.append(&s[..cut]);
                        s = &s[cut..];
                    }
                    let next_w = s.chars().next().map_or(0, char::len_utf8);
                    self.settle();
                    self.close_at_limit(next_w);
                    continue;
                }
            }
            self.append(s);
            break;
        }
    }

    #[inline]
    fn append(&mut self, s: &str) {
        self.held.push_str(s);
        self.out_len += s.len();
    }

    /// Works out what the text appended since the last call means (see
    /// [`text`](Builder::text)). Every entry point calls it first but `text`, the size
    /// queries and `open_before_frontier` / `has_annotations_pending` (which read nothing
    /// the reading changes) and `at_fresh_line` (`false` over unread text), so everything
    /// else sees the state the text, read piece by piece,
    /// would have left: reading `a` then `b` is reading `a + b`, as it must be for any
    /// chunking of the input, and this reading changes no open tag's position or
    /// membership, no span and no marker, only what a tag has seen so far (decision 73).
    #[inline]
    fn settle(&mut self) {
        if self.settled != self.out_len {
            self.settle_text();
        }
    }

    // Bounds: `[settled, out_len)` is within `[held_start, out_len)`, which `held[held_off..]`
    // covers: nothing is emitted (and `held_start` moves only by emitting) before a settle.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    #[inline(never)]
    fn settle_text(&mut self) {
        let start = self.settled;
        self.settled = self.out_len;
        // The reading below looks at the open tags, never at `held`; it is lent out so
        // that the text can be read while the tags change.
        let held = std::mem::take(&mut self.held);
        self.read_piece(&held[self.held_off + (start - self.held_start)..], start);
        self.held = held;
    }

    fn is_kept(&self, c: char) -> bool {
        !self.rules.trim || !is_trim_char(c)
    }

    fn first_kept_in(&self, s: &str) -> Option<usize> {
        if self.rules.trim {
            first_kept(s)
        } else if s.is_empty() {
            None
        } else {
            Some(0)
        }
    }

    fn last_kept_end_in(&self, s: &str) -> Option<usize> {
        if self.rules.trim {
            last_kept_end(s)
        } else if s.is_empty() {
            None
        } else {
            Some(s.len())
        }
    }

    /// Reads `s`, the output from `start` on.
    // Bounds: `first` (a memchr hit) is < s.len() and `\n` is ASCII, so `s[..first]` is a char
    // boundary.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn read_piece(&mut self, s: &str, start: usize) {
        if let Some(back) = self.open.back() {
            let (back_p, back_id) = (back.p, back.id);
            if back_p == start {
                if let Some(first) = s.chars().next() {
                    self.classify_fresh(first, start);
                }
            }
            if back_id >= self.kept_from {
                if let Some(k) = self.first_kept_in(s) {
                    let from = self.kept_from;
                    for t in self.open.iter_mut().rev() {
                        if t.id < from {
                            break;
                        }
                        t.first_kept = Pos::some(start + k);
                    }
                    self.kept_from = self.next_id;
                }
            }
            if !self.tok_wait.is_empty() || !self.tok_run.is_empty() {
                self.scan_tokens(s, start);
            }
        }
        if let Some(last) = self.rules.newline.rfind(s.as_bytes()) {
            if self.open.back().is_some_and(|b| b.id >= self.nl_from) {
                let first = self.rules.newline.find(s.as_bytes()).unwrap_or(last);
                let ke = self
                    .last_kept_end_in(&s[..first])
                    .map_or(self.kept_end, |e| start + e);
                self.first_newline(start + first, ke);
            }
            self.line_start = start + last + 1;
        }
        if let Some(e) = self.last_kept_end_in(s) {
            self.kept_end = start + e;
        }
    }

    /// First content char `first` of the tags opened at `start`.
    fn classify_fresh(&mut self, first: char, start: usize) {
        let kept = self.is_kept(first);
        let trim = self.rules.trim;
        let mut changed = None;
        let mut n_dyn = self.n_dyn;
        for (i, t) in self.open.iter_mut().enumerate().rev() {
            if t.p != start {
                break;
            }
            changed = Some(i);
            if t.shared {
                continue;
            }
            match t.strategy {
                Strategy::ForwardUntilTag | Strategy::ForwardUntilNewline if trim && kept => {
                    t.fixed_u = usize::MAX;
                    t.dyn_kept = true;
                    n_dyn += 1;
                }
                // No trimming: sure up to the first newline, unless it comes first.
                Strategy::ForwardUntilNewline if !trim && first != '\n' => t.fixed_u = usize::MAX,
                Strategy::ForwardNextToken if first.is_alphanumeric() => t.fixed_u = usize::MAX,
                _ => {}
            }
        }
        self.n_dyn = n_dyn;
        if let Some(i) = changed {
            self.recompute_prefix(i);
        }
    }

    /// The first newline at or after the `p` of every tag opened since the last one.
    fn first_newline(&mut self, nl: usize, kept_end: usize) {
        let from = self.nl_from;
        let mut changed = None;
        let mut n_dyn = self.n_dyn;
        for (i, t) in self.open.iter_mut().enumerate().rev() {
            if t.id < from {
                break;
            }
            t.first_nl = Pos::some(nl);
            t.kept_end_at_nl = kept_end;
            if t.strategy == Strategy::ForwardUntilNewline {
                if t.dyn_kept {
                    t.dyn_kept = false;
                    n_dyn -= 1;
                    t.fixed_u = kept_end;
                } else if t.fixed_u == usize::MAX {
                    t.fixed_u = nl;
                }
            }
            changed = Some(i);
        }
        self.n_dyn = n_dyn;
        self.nl_from = self.next_id;
        if let Some(i) = changed {
            self.recompute_prefix(i);
        }
    }

    /// Tracks the first alphanumeric run after `forward_next_token` tags.
    // Bounds: `k` comes from `index_of`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn scan_tokens(&mut self, s: &str, start: usize) {
        for (i, c) in s.char_indices() {
            let pos = start + i;
            if c.is_alphanumeric() {
                while let Some(id) = self.tok_wait.pop_front() {
                    if let Some(k) = self.index_of(id) {
                        self.open[k].tok_start = Pos::some(pos);
                        self.tok_run.push_back(id);
                    }
                }
            } else if !self.tok_run.is_empty() {
                let mut lowest = usize::MAX;
                while let Some(id) = self.tok_run.pop_front() {
                    if let Some(k) = self.index_of(id) {
                        let t = &mut self.open[k];
                        t.tok_end = Pos::some(pos);
                        if t.fixed_u == usize::MAX {
                            t.fixed_u = pos;
                            lowest = lowest.min(k);
                        }
                    }
                }
                if lowest != usize::MAX {
                    self.recompute_prefix(lowest);
                }
            }
            if self.tok_wait.is_empty() && self.tok_run.is_empty() {
                break;
            }
        }
    }

    fn index_of(&self, id: u64) -> Option<usize> {
        self.open.binary_search_by_key(&id, |t| t.id).ok()
    }

    // Bounds: `from >= 1` when `open[from - 1]` is read, and callers pass from <= open.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn recompute_prefix(&mut self, from: usize) {
        let mut m = if from == 0 {
            usize::MAX
        } else {
            self.open[from - 1].prefix_min
        };
        for t in self.open.iter_mut().skip(from) {
            m = m.min(t.fixed_u);
            t.prefix_min = m;
        }
    }

    // ----------------------------------------------------------------- cursors

    /// `clip(p)`: the earliest position a retro span of a tag at `p` may start.
    // Bounds: `held_off` and the offset derived from `c > held_start` stay within `held` (held
    // covers [held_start, out_len)).
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    #[inline]
    fn clip(&self, p: usize) -> usize {
        let c = p.saturating_sub(self.rules.max_span_bytes);
        if c <= self.held_start {
            return self.held_start;
        }
        let held = &self.held[self.held_off..];
        self.held_start + ceil_boundary(held, c - self.held_start)
    }

    /// The cursor's first kept char at or after `x`.
    #[inline]
    fn cursor_query(&mut self, claim: bool, x: usize) -> usize {
        let cur = if claim { self.claim_cur } else { self.line_cur };
        let cur = self.cursor_advance(cur, x);
        if claim {
            self.claim_cur = cur;
        } else {
            self.line_cur = cur;
        }
        cur.at
    }

    /// `cur` answering a query for `x`: its `at` is the first kept char at or after `x` if
    /// `found`, else `out_len` (none yet).
    #[inline]
    fn cursor_advance(&self, cur: Cursor, x: usize) -> Cursor {
        if cur.found && x <= cur.at && cur.at < self.out_len {
            // Already found and still ahead of `x`: the answer of every later query too.
            return cur;
        }
        self.cursor_scan(cur, x)
    }

    // Bounds: `from` is clamped to `held_start..=out_len`, which `held[held_off..]` covers.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    #[inline(never)]
    fn cursor_scan(&self, mut cur: Cursor, x: usize) -> Cursor {
        if x > cur.at {
            cur = Cursor {
                at: x,
                found: false,
            };
        }
        if cur.found && cur.at < self.out_len {
            return cur;
        }
        let from = cur.at.max(self.held_start);
        let held = &self.held[self.held_off + (from - self.held_start)..];
        match self.first_kept_in(held) {
            Some(k) => Cursor {
                at: from + k,
                found: true,
            },
            None => Cursor {
                at: self.out_len,
                found: false,
            },
        }
    }

    /// Where a `retro_claim` span of a tag at `p` starts, before trimming.
    fn claim_anchor(&self, p: usize) -> usize {
        let mut s = self.line_start.max(self.clip(p));
        if let Some(lc) = self.last_claim {
            s = s.max(lc.end);
        }
        s
    }

    // ----------------------------------------------------------------- tags

    /// A recognized start tag. Returns `false` (and does nothing) if `max_depth` tags are
    /// already open: the caller then treats it as an unrecognized tag.
    // Bounds: `tag` is a tag id from `Rules::lookup`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn start_tag(&mut self, tag: usize, attrs: Attrs, src: usize) -> bool {
        self.settle();
        self.dirty = true;
        self.autoclose(tag, src);
        if self.open.len() >= self.rules.max_depth {
            return false;
        }
        let strategy = self.rules.tags[tag].strategy;
        self.open_tag(tag, attrs, src, strategy, false);
        true
    }

    /// A recognized self-closing tag: a marker, or (E5) a forward annotation. Returns
    /// `false` like [`start_tag`](Builder::start_tag) when an E5 tag would exceed `max_depth`.
    // Bounds: `tag` is a tag id from `Rules::lookup`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn self_closing_tag(&mut self, tag: usize, attrs: Attrs, src: usize) -> bool {
        self.settle();
        self.dirty = true;
        self.autoclose(tag, src);
        let strategy = match self.rules.tags[tag].self_closing {
            SelfClosing::Marker => None,
            SelfClosing::NextToken => Some(Strategy::ForwardNextToken),
            SelfClosing::UntilNewline => Some(Strategy::ForwardUntilNewline),
        };
        if let Some(strategy) = strategy {
            if self.open.len() >= self.rules.max_depth {
                return false;
            }
            self.open_tag(tag, attrs, src, strategy, true);
            return true;
        }
        let name = self.rules.tags[tag].name.clone();
        self.markers.push_back(Marker {
            pos: self.out_len,
            annotation: Annotation::closed(name, attrs, src, Close::SelfClosing),
        });
        true
    }

    /// A recognized end tag. Returns `false` if it was stray (the caller applies the
    /// stray policy).
    // Bounds: `tag` is a tag id from `Rules::lookup`, < open_count.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn end_tag(&mut self, tag: usize, src: usize) -> bool {
        self.settle();
        self.dirty = true;
        if self.open_count[tag] == 0 {
            return false;
        }
        let Some(i) = self.open.iter().rposition(|t| t.tag == tag && !t.e5) else {
            return false;
        };
        let c = self.out_len;
        self.close_newer_than(i, c, Close::AutoClosed { offset: src });
        if let Some(t) = self.pop_back() {
            self.close_tag(t, c, Close::EndTag { offset: src });
        }
        true
    }

    /// Steps 1–2 of SPEC §3 for a recognized start or self-closing tag.
    // Bounds: `i` comes from rposition over `open`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn autoclose(&mut self, tag: usize, src: usize) {
        let c = self.out_len;
        if self.rules.autoclose_on_same_tag && self.open_count[tag] > 0 {
            if let Some(i) = self.open.iter().rposition(|t| t.tag == tag && !t.e5) {
                self.close_newer_than(i, c, Close::AutoClosed { offset: src });
                if let Some(t) = self.pop_back() {
                    self.close_tag(t, c, Close::Reopened { offset: src });
                }
            }
        }
        if self.rules.autoclose_on_any_tag {
            self.close_newer_than_len(0, c, Close::AutoClosed { offset: src });
        }
    }

    fn close_newer_than(&mut self, i: usize, c: usize, close: Close) {
        self.close_newer_than_len(i + 1, c, close);
    }

    /// Closes by recovery, newest first, until `len` tags remain.
    fn close_newer_than_len(&mut self, len: usize, c: usize, close: Close) {
        while self.open.len() > len {
            if let Some(t) = self.pop_back() {
                self.close_tag(t, c, close);
            }
        }
    }

    // Bounds: `tag` is a tag id from `Rules::lookup`, < tags.len() == open_count.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn open_tag(&mut self, tag: usize, attrs: Attrs, src: usize, strategy: Strategy, e5: bool) {
        let p = self.out_len;
        let trim = self.rules.trim;
        let rec = match strategy {
            Strategy::RetroLine => {
                let s = self.line_start.max(self.clip(p));
                let a = self.cursor_query(false, s);
                Rec::Span((a < p).then_some((a, self.kept_end)))
            }
            Strategy::RetroClaim => {
                let s = self.claim_anchor(p);
                let a = self.cursor_query(true, s);
                if a < p {
                    Rec::Span(Some((a, self.kept_end)))
                } else {
                    match self.last_claim {
                        Some(lc) if lc.end >= self.line_start => match lc.span {
                            ClaimSpan::Closed(Some((a, b))) => {
                                let a = a.max(self.clip(p));
                                Rec::Span((a < b).then_some((a, b)))
                            }
                            ClaimSpan::Closed(None) => Rec::Span(None),
                            ClaimSpan::Open(target) => Rec::Fallback {
                                target,
                                clip: self.clip(p),
                            },
                        },
                        _ => Rec::Span(None),
                    }
                }
            }
            _ => Rec::Span(None),
        };
        let fixed_u = match (strategy, rec) {
            (_, Rec::Span(Some((a, _)))) => a,
            (Strategy::ForwardUntilTag, _) if !trim => usize::MAX,
            _ => p,
        };
        // Ties of span start make the annotation order depend on how spans end: mark them.
        // Once two tags share a position both are marked, so only the newest needs a look.
        let mut shared = false;
        if let Some(k) = self.open.len().checked_sub(1) {
            if self.open[k].p == p {
                self.mark_shared(k);
                shared = true;
            }
        }
        if let Rec::Span(Some((a, _))) = rec {
            self.mark_shared_at(a);
        }
        let fixed_u = if shared && fixed_u == usize::MAX {
            p
        } else {
            fixed_u
        };
        let id = self.next_id;
        self.next_id += 1;
        let prefix_min = self
            .open
            .back()
            .map_or(fixed_u, |b| b.prefix_min.min(fixed_u));
        if strategy == Strategy::ForwardNextToken {
            self.tok_wait.push_back(id);
        }
        if strategy == Strategy::RetroClaim {
            self.last_claim = Some(LastClaim {
                end: p,
                span: ClaimSpan::Open(id),
            });
        }
        if !e5 {
            self.open_count[tag] += 1;
        }
        let name = self.rules.tags[tag].name.clone();
        self.open_list = None;
        self.open.push_back(OpenTag {
            id,
            tag,
            ann: Annotation::open(name, attrs, src),
            p,
            strategy,
            rec,
            first_kept: Pos::NONE,
            first_nl: Pos::NONE,
            kept_end_at_nl: 0,
            tok_start: Pos::NONE,
            tok_end: Pos::NONE,
            dependents: None,
            fixed_u,
            dyn_kept: false,
            prefix_min,
            shared,
            e5,
        });
    }

    /// Marks the open tag at index `k` as sharing its start (see [`OpenTag::shared`]).
    // Bounds: callers pass an index < open.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn mark_shared(&mut self, k: usize) {
        let t = &mut self.open[k];
        if t.shared {
            return;
        }
        t.shared = true;
        if t.dyn_kept {
            t.dyn_kept = false;
            self.n_dyn -= 1;
        }
        if t.fixed_u > t.p {
            t.fixed_u = t.p;
            self.recompute_prefix(k);
        }
    }

    /// Marks every open tag that starts at `pos`. (Two or more open tags at one position
    /// are already marked, so only a single one can need it.)
    // Bounds: `from` is checked against open.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn mark_shared_at(&mut self, pos: usize) {
        let from = self.open.partition_point(|t| t.p < pos);
        if from < self.open.len() && self.open[from].p == pos {
            self.mark_shared(from);
        }
    }

    // Bounds: `t.tag` is a tag id from `Rules::lookup`, < open_count.len().
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn forget(&mut self, t: &OpenTag) {
        self.open_list = None;
        if !t.e5 {
            self.open_count[t.tag] -= 1;
        }
        if t.dyn_kept {
            self.n_dyn -= 1;
        }
        if self.tok_wait.back() == Some(&t.id) {
            self.tok_wait.pop_back();
        }
        if self.tok_run.back() == Some(&t.id) {
            self.tok_run.pop_back();
        }
        if self.tok_wait.front() == Some(&t.id) {
            self.tok_wait.pop_front();
        }
        if self.tok_run.front() == Some(&t.id) {
            self.tok_run.pop_front();
        }
    }

    fn pop_back(&mut self) -> Option<OpenTag> {
        let t = self.open.pop_back()?;
        self.forget(&t);
        Some(t)
    }

    /// Closes, by recovery, the oldest tags whose content has reached `max_span_bytes`
    /// (or would pass it with the next char, `next_w` bytes wide).
    // Bounds: `k` ranges over `0..open.len()`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn close_at_limit(&mut self, next_w: usize) {
        let c = self.out_len;
        let max = self.rules.max_span_bytes;
        let mut closed_any = false;
        while let Some(front) = self.open.front() {
            let limit = front.p.saturating_add(max);
            if !(limit <= c || (next_w > 0 && limit < c + next_w)) {
                break;
            }
            let Some(t) = self.open.pop_front() else {
                break;
            };
            self.forget(&t);
            let id = t.id;
            let res = self.close_tag(t, c, Close::SpanLimit);
            let new_target = match res {
                Resolution::Deferred(k2, _) => self.open.get(k2).map(|t| t.id),
                Resolution::Known(_) => None,
            };
            // Tags that would fall back to its span now know it.
            for k in 0..self.open.len() {
                if let Rec::Fallback { target, clip } = self.open[k].rec {
                    if target == id {
                        self.open[k].rec = match res {
                            Resolution::Known(s) => Rec::Span(clip_span(s, clip)),
                            Resolution::Deferred(_, c2) => Rec::Fallback {
                                target: new_target.unwrap_or(target),
                                clip: clip.max(c2),
                            },
                        };
                        if let Rec::Span(Some((a, _))) = self.open[k].rec {
                            self.open[k].fixed_u = self.open[k].fixed_u.min(a);
                        }
                    }
                }
            }
            closed_any = true;
        }
        if closed_any {
            self.recompute_prefix(0);
        }
    }

    /// The span recovery gives `t` closed at `c` (not for fallbacks).
    fn recovery_span(&self, t: &OpenTag, c: usize) -> Option<(usize, usize)> {
        let trim = self.rules.trim;
        match t.strategy {
            Strategy::RetroLine | Strategy::RetroClaim => match t.rec {
                Rec::Span(s) => s,
                Rec::Fallback { .. } => None,
            },
            Strategy::ForwardUntilTag => {
                if trim {
                    t.first_kept
                        .get()
                        .filter(|&k| k < c)
                        .map(|k| (k, self.kept_end))
                } else {
                    (t.p < c).then_some((t.p, c))
                }
            }
            Strategy::ForwardUntilNewline => {
                let bound = t.first_nl.get().map_or(c, |n| n.min(c));
                if trim {
                    let end = if t.first_nl.get().is_some() {
                        t.kept_end_at_nl
                    } else {
                        self.kept_end
                    };
                    t.first_kept.get().filter(|&k| k < bound).map(|k| (k, end))
                } else {
                    (t.p < bound).then_some((t.p, bound))
                }
            }
            Strategy::ForwardNextToken => t
                .tok_start
                .get()
                .filter(|&s| s < c)
                .map(|s| (s, t.tok_end.get().map_or(c, |e| e.min(c)))),
            Strategy::Noop => None,
        }
    }

    /// Closes a tag already removed from the open list.
    // Bounds: `k` is the index of the target found by `index_of` just before, and nothing is
    // removed from `open` in between.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn close_tag(&mut self, t: OpenTag, c: usize, close: Close) -> Resolution {
        let explicit = matches!(close, Close::EndTag { .. } | Close::Reopened { .. });
        t.ann.set_close(close, (!explicit).then_some(t.strategy));
        let res = if explicit {
            Resolution::Known((t.p < c).then_some((t.p, c)))
        } else if let Rec::Fallback { target, clip } = t.rec {
            match self.index_of(target) {
                Some(k) => Resolution::Deferred(k, clip),
                None => Resolution::Known(None),
            }
        } else {
            Resolution::Known(self.recovery_span(&t, c))
        };
        match res {
            Resolution::Known(s) => {
                self.add_span(s, t.ann, t.id, t.p);
                for d in t.dependents.into_iter().flat_map(|d| *d) {
                    self.add_span(clip_span(s, d.clip), d.ann, d.seq, d.p);
                }
            }
            Resolution::Deferred(k, clip) => {
                let deps = self.open[k].dependents.get_or_insert_with(Box::default);
                deps.push(Dependent {
                    ann: t.ann,
                    seq: t.id,
                    p: t.p,
                    clip,
                });
                for d in t.dependents.into_iter().flat_map(|d| *d) {
                    deps.push(Dependent {
                        clip: d.clip.max(clip),
                        ..d
                    });
                }
            }
        }
        if let Some(lc) = &mut self.last_claim {
            if lc.span == ClaimSpan::Open(t.id) {
                lc.span = match res {
                    Resolution::Known(s) => ClaimSpan::Closed(s),
                    Resolution::Deferred(k, _) => ClaimSpan::Open(self.open[k].id),
                };
            }
        }
        if explicit && t.strategy == Strategy::RetroClaim {
            let span = match res {
                Resolution::Known(s) => s,
                Resolution::Deferred(..) => None,
            };
            self.last_claim = Some(LastClaim {
                end: c,
                span: ClaimSpan::Closed(span),
            });
        }
        res
    }

    /// Adds the final span of a tag opened at `p` (or, if it is empty and `empty_elements`
    /// is `marker`, a marker at `p`).
    fn add_span(&mut self, s: Option<(usize, usize)>, ann: Annotation, seq: u64, p: usize) {
        ann.set_span(s.filter(|(a, b)| a < b));
        let (start, end) = match s {
            Some((start, end)) if start < end => (start, end),
            _ => {
                if self.rules.empty_markers {
                    debug_assert!(
                        p >= self.held_start,
                        "empty-element marker before the frontier"
                    );
                    // Markers stay sorted by position (stable: creation order at one position).
                    let at = self.markers.partition_point(|m| m.pos <= p);
                    self.markers.insert(
                        at,
                        Marker {
                            pos: p,
                            annotation: ann,
                        },
                    );
                }
                return;
            }
        };
        self.mark_shared_at(start);
        let span = PSpan {
            start,
            end,
            seq,
            ann,
        };
        if start < self.held_start {
            // The final span of a forward tag whose content was emitted while it was open
            // (it covers exactly what was emitted with its annotation).
            if end > self.held_start {
                self.started.push(span);
            }
            return;
        }
        // Spans mostly arrive in start order: append unless one starts later.
        if self.pending.back().is_none_or(|p| p.start <= start) {
            self.pending.push_back(span);
        } else {
            let at = self.pending.partition_point(|p| p.start <= start);
            self.pending.insert(at, span);
        }
    }

    // ----------------------------------------------------------------- emission

    /// The frontier: output before it is final.
    #[inline]
    fn frontier(&mut self) -> usize {
        let (f, line, claim) = self.frontier_of(self.line_cur, self.claim_cur);
        self.line_cur = line;
        self.claim_cur = claim;
        f
    }

    /// The frontier computed with the given cursors, and the cursors after it.
    #[inline]
    fn frontier_of(&self, line: Cursor, claim: Cursor) -> (usize, Cursor, Cursor) {
        let mut f = self.out_len;
        if let Some(b) = self.open.back() {
            f = f.min(b.prefix_min);
        }
        if self.n_dyn > 0 {
            f = f.min(self.kept_end);
        }
        let mut line = line;
        if self.rules.uses_retro_line {
            let s = self.line_start.max(self.clip(self.out_len));
            line = self.cursor_advance(line, s);
            f = f.min(line.at);
        }
        let mut claim = claim;
        if self.rules.uses_retro_claim {
            let s = self.claim_anchor(self.out_len);
            claim = self.cursor_advance(claim, s);
            let q = claim.at;
            let r = if q < self.out_len {
                q
            } else {
                match self.last_claim {
                    Some(LastClaim {
                        end,
                        span: ClaimSpan::Closed(Some((a, _))),
                    }) if end >= self.line_start => a.max(self.clip(self.out_len)),
                    _ => self.out_len,
                }
            };
            f = f.min(r);
        }
        (f.max(self.held_start), line, claim)
    }

    /// Whether a [`flush`](Builder::flush) now would emit nothing (it may still move a
    /// cursor, to where a later query would find it anyway). Checks `plain_budget`.
    pub(crate) fn flush_is_noop(&mut self) -> bool {
        self.settle();
        let (f, _, _) = self.frontier_of(self.line_cur, self.claim_cur);
        f <= self.held_start && self.markers.front().is_none_or(|m| m.pos > f)
    }

    /// Emits everything that is final into `events`.
    #[inline]
    pub(crate) fn flush(&mut self) {
        self.settle();
        if !self.dirty {
            // The last flush emitted up to the frontier, which has not moved since: nothing
            // changed (an update inside a tag candidate or a partial character).
            debug_assert!(self.flush_is_noop(), "flush of an unchanged builder");
            return;
        }
        self.dirty = false;
        let f = self.frontier();
        self.emit_to(f, false, &mut ToEvents);
    }

    /// Emits everything that is final straight into `parse()`'s document (decision 52).
    pub(crate) fn flush_into(&mut self, doc: &mut Document) {
        self.settle();
        if self.dirty {
            self.dirty = false;
            let f = self.frontier();
            self.emit_to(f, false, doc);
        }
    }

    /// End of input: closes every open tag by recovery and emits everything into `events`.
    pub(crate) fn finish(&mut self) {
        self.finish_into(&mut ToEvents);
    }

    /// [`finish`](Builder::finish), into `out` (`parse()`'s document).
    pub(crate) fn finish_into<O: Out>(&mut self, out: &mut O) {
        self.settle();
        let c = self.out_len;
        self.close_newer_than_len(0, c, Close::EndOfInput);
        self.emit_to(self.out_len, true, out);
    }

    #[inline]
    fn emit_to<O: Out>(&mut self, f: usize, last: bool, out: &mut O) {
        // Most updates of a token stream have nothing new to emit.
        if f > self.held_start || self.markers.front().is_some_and(|m| m.pos <= f) {
            self.emit_range(f, last, out);
        }
    }

    /// [`emit_to`](Builder::emit_to) with something to emit.
    // Bounds: indices into `active` are < active.len(); text positions are in [held_start, f] with
    // f <= out_len, which `held[held_off..]` covers, and they are span or marker boundaries, all
    // char boundaries of the output.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    #[inline(never)]
    fn emit_range<O: Out>(&mut self, f: usize, last: bool, out: &mut O) {
        if self.emit_inside_open(f, last, out)
            || (self.flat_on()
                && if self.markers.front().is_some_and(|m| m.pos <= f) {
                    self.emit_flat::<O, true>(f, last, out)
                } else {
                    self.emit_flat::<O, false>(f, last, out)
                })
        {
            return;
        }
        let a = self.held_start;
        // Spans that cover part of [a, f): those already started, then pending ones
        // starting before f (pending is sorted by start).
        let mut active: Vec<PSpan> = std::mem::take(&mut self.started);
        while self.pending.front().is_some_and(|p| p.start < f) {
            if let Some(p) = self.pending.pop_front() {
                active.push(p);
            }
        }
        // Open tags starting before f: their final span surely covers [p, f).
        for t in self.open.iter() {
            if t.p >= f {
                break;
            }
            active.push(PSpan {
                start: t.p,
                end: f,
                seq: t.id,
                ann: t.ann.clone(),
            });
        }
        active.sort_by_key(|s| s.start);
        if last {
            // The last (for `parse()` the only) emission: each span start and end can begin a
            // segment. (Not while streaming: the capacity would stay with the parser.)
            out.reserve(&mut self.events, 2 * active.len() + 1, self.markers.len());
        }
        let mut cur: Vec<usize> = std::mem::take(&mut self.cur_buf);
        let mut next = 0; // index into `active` of the next span to start
        let mut pos = a;
        // Text of [a, f), created at the first text segment, and the offset in it of `a`.
        let mut shared: Option<(SharedBuf, usize)> = None;
        let mut adopted = false;
        // Past `HEAP_MIN` covering spans, their ends in a min-heap (`(end, index)`), so the
        // next segment end and the spans ending there cost O(log n), not a scan of `cur`
        // (decision 39).
        let mut ends: Option<BinaryHeap<Reverse<(usize, usize)>>> = None;
        // While `Some`, the annotations of `cur` are a prefix of this list, which the next
        // segments share: spans that end innermost first (nested retro spans, say) keep it so.
        let mut list: Option<Arc<[Annotation]>> = None;
        loop {
            let (mut grew, mut sorted) = (false, true);
            while next < active.len() && active[next].start <= pos {
                if active[next].end > pos {
                    grew = true;
                    // Usually after all the others (spans sorted by start, open tags in
                    // order); otherwise `cur` is sorted once, after the batch.
                    if cur
                        .last()
                        .is_some_and(|&k| active[k].key() > active[next].key())
                    {
                        sorted = false;
                    }
                    cur.push(next);
                    if let Some(h) = &mut ends {
                        h.push(Reverse((active[next].end, next)));
                    }
                    list = None;
                }
                next += 1;
            }
            if grew {
                if !sorted {
                    // Keys are unique (`seq`), so this is the order the inserts would give.
                    cur.sort_unstable_by_key(|&k| active[k].key());
                }
                if ends.is_none() && cur.len() > HEAP_MIN {
                    ends = Some(cur.iter().map(|&k| Reverse((active[k].end, k))).collect());
                }
            }
            self.markers_due(out, pos);
            if pos >= f {
                break;
            }
            let mut end = f;
            if next < active.len() {
                end = end.min(active[next].start);
            }
            match &ends {
                Some(h) => {
                    if let Some(&Reverse((e, _))) = h.peek() {
                        end = end.min(e);
                    }
                }
                None => {
                    for &k in &cur {
                        end = end.min(active[k].end);
                    }
                }
            }
            if let Some(m) = self.markers.front() {
                end = end.min(m.pos);
            }
            // One buffer for all the text of this emission; segments are ranges of it.
            let (buf, base) = match &shared {
                Some(s) => s.clone(),
                None => {
                    let s = self.take_text_out_of_line(f, last);
                    adopted = s.0.adopted();
                    shared.insert(s).clone()
                }
            };
            let annotations = match cur.as_slice() {
                [] => SegAnnotations::Zero,
                [k] => SegAnnotations::One([active[*k].ann.clone()]),
                [k, l] => SegAnnotations::Two([active[*k].ann.clone(), active[*l].ann.clone()]),
                _ => {
                    let l = match &list {
                        Some(l) if l.len() >= cur.len() => l.clone(),
                        _ => {
                            let l: Arc<[Annotation]> =
                                cur.iter().map(|&k| active[k].ann.clone()).collect();
                            list = Some(l.clone());
                            l
                        }
                    };
                    SegAnnotations::Shared(l, cur.len() as u32)
                }
            };
            let text = SegText::Shared {
                buf,
                lo: base + (pos - a),
                hi: base + (end - a),
            };
            out.push_text(&mut self.events, text, pos, annotations);
            pos = end;
            match &mut ends {
                Some(h) => {
                    // The heap holds exactly `cur`: what it pops is what ends here.
                    let mut gone = 0;
                    while h.peek().is_some_and(|&Reverse((e, _))| e <= pos) {
                        h.pop();
                        gone += 1;
                    }
                    let keep = cur.len() - gone;
                    if cur[keep..].iter().all(|&k| active[k].end <= pos) {
                        // The innermost spans ended: the rest is still a prefix of `list`.
                        cur.truncate(keep);
                    } else {
                        cur.retain(|&k| active[k].end > pos);
                        list = None;
                    }
                }
                None => {
                    let n = cur.len();
                    cur.retain(|&k| active[k].end > pos);
                    if cur.len() != n {
                        list = None;
                    }
                }
            }
        }
        // Virtual spans end at f: only real spans reaching past f stay.
        active.retain(|s| s.end > f);
        self.started = active;
        cur.clear();
        self.cur_buf = cur;
        self.emitted(f.max(a), adopted);
    }

    /// [`emit_range`](Builder::emit_range) in the steady state of text streamed inside open
    /// tags: when `[held_start, f)` is covered by exactly the open tags, all opened at or
    /// before `held_start` (no span has started or starts before `f`, no marker is due),
    /// it is one segment annotated by the open tags in order (none, one or two inline; a
    /// longer list built once and shared until a tag opens or closes). Without this, each
    /// update inside `d` nested tags costs O(d) (1024 by default) however little text it
    /// brings, and text in one or two tags (a streamed `<think>` or `<response>`) pays the
    /// general path's set-up per update (DESIGN.md, decision 59). Returns `false` (doing
    /// nothing) otherwise.
    fn emit_inside_open<O: Out>(&mut self, f: usize, last: bool, out: &mut O) -> bool {
        let a = self.held_start;
        if f <= a
            || self.open.back().is_some_and(|t| t.p > a)
            || !self.started.is_empty()
            || self.pending.front().is_some_and(|p| p.start < f)
            || self.markers.front().is_some_and(|m| m.pos <= f)
        {
            return false;
        }
        // In the general path these are virtual spans `[p, f)`, ordered by start, then
        // creation: the order of `open` (opened in turn, each at the output length then).
        // Up to two are kept inline (`SegAnnotations`), as the general path keeps them; a
        // longer list is built once and shared.
        let annotations = match (self.open.front(), self.open.get(1), self.open.get(2)) {
            (None, _, _) => SegAnnotations::Zero,
            (Some(t), None, _) => SegAnnotations::One([t.ann.clone()]),
            (Some(t), Some(u), None) => SegAnnotations::Two([t.ann.clone(), u.ann.clone()]),
            _ => {
                let list = self
                    .open_list
                    .get_or_insert_with(|| self.open.iter().map(|t| t.ann.clone()).collect())
                    .clone();
                let n = list.len() as u32;
                SegAnnotations::Shared(list, n)
            }
        };
        // A token's worth of text is copied into the segment (decision 89).
        let short = if O::INLINE && f - a <= INLINE_TEXT {
            self.held
                .get(self.held_off..self.held_off + (f - a))
                .and_then(SegText::inline)
        } else {
            None
        };
        let (text, adopted) = match short {
            Some(text) => (text, false),
            None => {
                let (buf, base) = self.take_text(f, last);
                let adopted = buf.adopted();
                let text = SegText::Shared {
                    buf,
                    lo: base,
                    hi: base + (f - a),
                };
                (text, adopted)
            }
        };
        out.push_text(&mut self.events, text, a, annotations);
        self.emitted(f, adopted);
        true
    }

    /// [`emit_range`](Builder::emit_range) where no two spans that reach into
    /// `[held_start, f)` overlap (each starts at or after the end of the one before) and no
    /// open tag started before `f`: each segment then has one annotation or none, so the
    /// segments are the gaps between the spans and the spans' parts, in order, each cut
    /// where a marker is due (`MARKERS`: some marker is due by `f`), the marker pushed
    /// before the text from its position on. Postfix cites that each claim the text back
    /// to the one before make such chains, and a stream emits a few links of one at each
    /// cite; closed tags side by side, with self-closing ones between them, make them in
    /// `parse()`'s slices. The general emission gives the same segments and markers, but
    /// sets up its lists of covering spans for each emission, from about 4 KiB of code
    /// (decisions 102 and 110). Returns `false` (doing nothing) otherwise.
    #[inline(never)]
    fn emit_flat<O: Out, const MARKERS: bool>(
        &mut self,
        f: usize,
        last: bool,
        out: &mut O,
    ) -> bool {
        let a = self.held_start;
        if f <= a || self.started.len() > 1 || self.open.front().is_some_and(|t| t.p < f) {
            return false;
        }
        let mut spans = 0;
        let mut end = 0;
        for s in self
            .started
            .iter()
            .chain(self.pending.iter().take_while(|p| p.start < f))
        {
            if s.start < end {
                return false;
            }
            end = s.end;
            spans += 1;
        }
        if last {
            // (As the general path reserves: the markers due are at most all of them.)
            let markers = if MARKERS { self.markers.len() } else { 0 };
            out.reserve(&mut self.events, 2 * spans + 1, markers);
        }
        let (buf, base) = self.take_text_out_of_line(f, last);
        let adopted = buf.adopted();
        let mut pos = a;
        // (A segment of `[lo, hi)`, of the emission's one buffer.)
        let text = |lo: usize, hi: usize| SegText::Shared {
            buf: buf.clone(),
            lo: base + (lo - a),
            hi: base + (hi - a),
        };
        // The started span (at most one, before the pending ones) is taken first.
        if let Some(s) = self.started.pop() {
            self.pending.push_front(s);
        }
        while self.pending.front().is_some_and(|p| p.start < f) {
            let Some(s) = self.pending.pop_front() else {
                break;
            };
            let (lo, hi) = (s.start.max(pos), s.end.min(f));
            if lo > pos {
                self.flat_text::<O, MARKERS>(out, &text, pos, lo, SegAnnotations::Zero);
                pos = lo;
            }
            if hi > lo {
                // (The span's annotation moves into its last segment.)
                let ann = if s.end > f {
                    let ann = s.ann.clone();
                    self.started.push(s);
                    ann
                } else {
                    s.ann
                };
                let ann = SegAnnotations::One([ann]);
                self.flat_text::<O, MARKERS>(out, &text, lo, hi, ann);
                pos = hi;
            }
        }
        if pos < f {
            self.flat_text::<O, MARKERS>(out, &text, pos, f, SegAnnotations::Zero);
        }
        if MARKERS {
            self.markers_due(out, f);
        }
        self.emitted(f, adopted);
        #[cfg(test)]
        {
            self.flat_taken += 1;
        }
        true
    }

    /// Whether [`emit_flat`](Builder::emit_flat) may be tried (tests turn it off to compare
    /// the two paths).
    #[inline(always)]
    fn flat_on(&self) -> bool {
        #[cfg(test)]
        if self.general_only {
            return false;
        }
        true
    }

    /// [`emit_flat`](Builder::emit_flat)'s text `[lo, hi)` with `ann` or no annotation,
    /// cut at each marker due inside it, each marker pushed before the text from its
    /// position on: the segments and markers the general path gives.
    #[inline(always)]
    fn flat_text<O: Out, const MARKERS: bool>(
        &mut self,
        out: &mut O,
        text: &impl Fn(usize, usize) -> SegText,
        mut lo: usize,
        hi: usize,
        annotations: SegAnnotations,
    ) {
        if MARKERS {
            loop {
                self.markers_due(out, lo);
                match self.markers.front() {
                    Some(m) if m.pos < hi => {
                        // (A piece before the last takes a clone of the annotations.)
                        let cut = m.pos;
                        out.push_text(&mut self.events, text(lo, cut), lo, annotations.clone());
                        lo = cut;
                    }
                    _ => break,
                }
            }
        }
        out.push_text(&mut self.events, text(lo, hi), lo, annotations);
    }

    /// Pushes the markers at or before `pos` (both emission paths).
    #[inline(always)]
    fn markers_due<O: Out>(&mut self, out: &mut O, pos: usize) {
        while self.markers.front().is_some_and(|m| m.pos <= pos) {
            if let Some(m) = self.markers.pop_front() {
                out.push(&mut self.events, Event::Marker(m));
            }
        }
    }

    /// After an emission up to `f`: the emitted text leaves the buffer (an adopted buffer
    /// took it along, leaving only the rest).
    fn emitted(&mut self, f: usize, adopted: bool) {
        if adopted {
            self.held_off = 0;
        } else {
            self.held_off += f - self.held_start;
        }
        self.held_start = f;
        if self.held_off > 4096 && self.held_off * 2 > self.held.len() {
            self.held.drain(..self.held_off);
            self.held_off = 0;
        }
    }
}

/// Where an emission's events go: the builder's list, which `update` returns
/// (`ToEvents`), or `parse()`'s document, which takes them straight (decision 52). Each is
/// its own instance of the emission code, so streams run the same code as before the
/// document took events. `events` is the builder's list, passed along because the
/// emission holds the builder.
pub(crate) trait Out {
    /// Whether a short segment holds its text inline (decision 89): for events, whose
    /// segments each take their own buffer or a reference to a shared one; not for
    /// `parse()`'s document, whose segments are ranges of one buffer that it joins where
    /// they meet without copying.
    const INLINE: bool;
    fn push(&mut self, events: &mut Vec<Event>, e: Event);
    /// `push(Event::Text(..))` from the segment's parts (the document takes them as they
    /// are: `Document::push_text`).
    #[inline(always)]
    fn push_text(
        &mut self,
        events: &mut Vec<Event>,
        text: SegText,
        start: usize,
        annotations: SegAnnotations,
    ) {
        let segment = Segment {
            text,
            start,
            annotations,
        };
        self.push(events, Event::Text(segment));
    }
    /// Room for `segments` more segments and `markers` more markers.
    fn reserve(&mut self, events: &mut Vec<Event>, segments: usize, markers: usize);
}

/// The builder's own list.
pub(crate) struct ToEvents;

impl Out for ToEvents {
    const INLINE: bool = true;
    #[inline(always)]
    fn push(&mut self, events: &mut Vec<Event>, e: Event) {
        events.push(e);
    }
    fn reserve(&mut self, events: &mut Vec<Event>, segments: usize, markers: usize) {
        events.reserve(segments + markers);
    }
}

impl Out for Document {
    const INLINE: bool = false;
    #[inline(always)]
    fn push(&mut self, _: &mut Vec<Event>, e: Event) {
        Document::push(self, e);
    }
    /// (The document sets `start` itself: its length so far, which is the same.)
    #[inline(always)]
    fn push_text(&mut self, _: &mut Vec<Event>, text: SegText, _: usize, a: SegAnnotations) {
        Document::push_text(self, text, a);
    }
    fn reserve(&mut self, _: &mut Vec<Event>, segments: usize, markers: usize) {
        Document::reserve(self, segments, markers);
    }
}

/// Plain text of at least this many bytes that comes as a `&str` is appended with one copy
/// (`String::push_str`); shorter text, or bytes, a char at a time, which costs less for one
/// to three bytes than the copy's call (DESIGN.md, decision 47).
pub(crate) const PLAIN_COPY_MIN: usize = 4;

/// Covering spans past which `emit_range` keeps their ends in a heap instead of scanning
/// them for every segment.
const HEAP_MIN: usize = 16;

/// Emissions of at least this many bytes may adopt the builder's buffer instead of copying.
const ADOPT_MIN: usize = 16 << 10;

/// Emissions of at most this many bytes are copied into the builder's reusable buffer
/// (`Builder::pool`, grown up to this size) when no event holds it: a stream whose events
/// are dropped before the next update (the usual consumer) then allocates nothing per
/// emission, whatever its chunks; longer emissions allocate once per at least this many
/// bytes. As large as the queue's bound (`parser::QUEUE_MAX`): a parser that has emitted
/// holds at most this much more (decision 69).
const POOL_MAX: usize = 4 << 10;

/// The pooled buffer's first capacity: room for a line's emission in one step (as
/// `parser::QUEUE_FIRST` for the queue).
const POOL_FIRST: usize = 512;

/// The event list's first capacity, taken with the output buffer's (decision 90): a few
/// events, within what the allocator serves from its per-thread cache.
const EVENTS_FIRST: usize = 8;

/// The buffer for an emission `text` of at most `POOL_MAX` bytes: the pooled one,
/// rewritten, when nothing else holds it any more (the first time, a new one of at least
/// `POOL_FIRST` bytes; one too small is replaced by one of twice its size, or of the text's
/// size if that is more, and at most `POOL_MAX`); while
/// an event still holds it, a copy of exact size as for longer emissions, so a consumer
/// that keeps its events pays what it did without the pool.
#[inline(always)]
fn pooled(pool: &mut Option<Arc<String>>, text: &str) -> SharedBuf {
    match pool {
        Some(p) => match Arc::get_mut(p) {
            Some(s) => {
                if s.capacity() < text.len() {
                    // Grown by doubling (not `reserve`, whose `realloc` would copy the
                    // old text).
                    *s = String::with_capacity(text.len().max(2 * s.capacity()).min(POOL_MAX));
                } else {
                    s.clear();
                }
                s.push_str(text);
                SharedBuf::Pooled(Arc::clone(p))
            }
            None => SharedBuf::Copied(Arc::from(text)),
        },
        None => {
            let mut s = String::with_capacity(text.len().max(POOL_FIRST));
            s.push_str(text);
            let p = Arc::new(s);
            *pool = Some(Arc::clone(&p));
            SharedBuf::Pooled(p)
        }
    }
}

impl Builder {
    /// The buffer for the emitted text `[held_start, f)` and the offset of its first byte.
    ///
    /// Short emissions copy the text into the pooled buffer (`pooled`), others copy it out
    /// (one allocation; the builder keeps its buffer for reuse). A large emission that
    /// leaves little before or after it in the builder's buffer takes that buffer whole and
    /// moves the rest (at most an eighth of the emitted size) to a new one, so the bulk of
    /// the text is never copied; `last` (end of input) means no text follows, so the new
    /// buffer gets no spare room.
    // Bounds: `held_off <= hi <= held.len()`, both char boundaries (see `emit_range`).
    #[allow(clippy::string_slice)]
    #[inline(always)]
    fn take_text(&mut self, f: usize, last: bool) -> (SharedBuf, usize) {
        let n = f - self.held_start;
        let hi = self.held_off + n;
        let before = self.held_off;
        let after = self.held.len() - hi;
        // (The last emission makes no pool: none would reuse it. `parse()` of up to 64 KiB
        // emits once, at the end.)
        if n <= POOL_MAX && !(last && self.pool.is_none()) {
            return (pooled(&mut self.pool, &self.held[before..hi]), 0);
        }
        if n < ADOPT_MIN || before > n / 8 || after > n / 8 {
            return (SharedBuf::Copied(Arc::from(&self.held[before..hi])), 0);
        }
        // Room for the rest and about as much again as was just emitted (what a stream of
        // large chunks adds before its next emission; a quarter more was measured and
        // dropped: decision 64).
        let cap = if last { after } else { after + n };
        let mut rest = String::with_capacity(cap);
        rest.push_str(&self.held[hi..]);
        let mut whole = std::mem::replace(&mut self.held, rest);
        whole.truncate(hi);
        // Spare room of up to the text's size stays with the buffer (shrinking may copy).
        if whole.capacity() > 2 * hi {
            whole.shrink_to_fit();
        }
        (SharedBuf::Adopted(Arc::new(whole)), before)
    }

    /// [`take_text`](Builder::take_text) for the general emission, called once per
    /// emission of any number of segments.
    #[inline(never)]
    fn take_text_out_of_line(&mut self, f: usize, last: bool) -> (SharedBuf, usize) {
        self.take_text(f, last)
    }
}

fn clip_span(s: Option<(usize, usize)>, clip: usize) -> Option<(usize, usize)> {
    s.and_then(|(a, b)| {
        let a = a.max(clip);
        (a < b).then_some((a, b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, SelfClosing};

    /// An open tag is moved on every open and close: at 128 bytes or less the move is
    /// inline stores, past it a call to `memcpy` (at 176 bytes, `perf` put 2.4% of
    /// `parse()`'s wall time on prose in those copies: decision 80).
    #[test]
    fn an_open_tag_fits_in_128_bytes() {
        assert!(std::mem::size_of::<OpenTag>() <= 128);
        assert_eq!(Pos::NONE.get(), None);
        assert_eq!(Pos::some(0).get(), Some(0));
        assert_eq!(Pos::some(usize::MAX - 1).get(), Some(usize::MAX - 1));
    }

    /// One step of a builder script.
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Text(&'static str),
        /// Plain ASCII text through `push_plain` (which refuses it where `text` would do
        /// more than append).
        Plain(&'static str),
        Start(usize),
        End(usize),
        SelfClosing(usize),
        Flush,
        /// One of the queries the parser makes between updates (`at_fresh_line`,
        /// `line_pin_room`, `plain_budget`, `flush_is_noop`).
        Query(u8),
    }

    /// The events of `ops` and, after every step but `Text`, the answers of the steps and
    /// the builder's whole state; every piece of text read as it comes (`eager`) or only at
    /// the next entry point that settles (decision 73).
    fn run(rules: &Arc<Rules>, ops: &[Op], eager: bool) -> (Document, Vec<String>, Vec<bool>) {
        let mut b = Builder::new(rules.clone());
        let mut doc = Document::default();
        let mut trace = Vec::new();
        // `at_fresh_line` settles nothing (it answers `false` over unread text): its answers
        // apart, and no state after it.
        let mut fresh = Vec::new();
        let mut src = 0;
        for &op in ops {
            let answer = match op {
                Op::Text(s) => {
                    b.text(s);
                    if eager {
                        b.settle();
                    }
                    src += s.len();
                    None
                }
                Op::Plain(s) => {
                    let (len, kept) = crate::text::plain_ascii_prefix(s.as_bytes());
                    assert_eq!(len, s.len(), "{s:?} is not plain");
                    let took = b.push_plain(s.as_bytes(), kept);
                    if took {
                        src += s.len();
                    }
                    Some(format!("{took}"))
                }
                Op::Start(t) => Some(format!("{}", b.start_tag(t, Attrs::default(), src))),
                Op::End(t) => Some(format!("{}", b.end_tag(t, src))),
                Op::SelfClosing(t) => {
                    Some(format!("{}", b.self_closing_tag(t, Attrs::default(), src)))
                }
                Op::Flush => {
                    b.flush();
                    Some(String::new())
                }
                Op::Query(0) => {
                    fresh.push(b.at_fresh_line());
                    None
                }
                Op::Query(1) => Some(format!("{:?}", b.line_pin_room())),
                Op::Query(2) => Some(format!("{}", b.plain_budget())),
                Op::Query(_) => Some(format!("{}", b.flush_is_noop())),
            };
            for e in b.events.drain(..) {
                doc.push(e);
            }
            if let Some(a) = answer {
                trace.push(format!("{a} {b:?}"));
            }
        }
        b.finish();
        for e in b.events.drain(..) {
            doc.push(e);
        }
        (doc, trace, fresh)
    }

    /// Text read piece by piece and read as one run give the same document, the same
    /// answers and the same state after every step but text, for every recovery strategy
    /// (each reading of text: first char, first kept char, first token, newlines, trailing
    /// trimmable chars) and a span limit inside the runs; seeded random scripts of text
    /// pieces (the pieces that border a tag, a reference or a limit, split inside tokens,
    /// whitespace and non-ASCII text) between tags, plain appends, queries and flushes.
    #[test]
    fn text_read_in_pieces_or_in_one_run_agrees() {
        let tags = ["r", "c", "f", "n", "k", "o", "s"];
        let base = Config::default()
            .with_tags(tags)
            .and_then(|c| c.with_recovery("r", Strategy::RetroLine))
            .and_then(|c| c.with_recovery("c", Strategy::RetroClaim))
            .and_then(|c| c.with_recovery("f", Strategy::ForwardUntilTag))
            .and_then(|c| c.with_recovery("n", Strategy::ForwardUntilNewline))
            .and_then(|c| c.with_recovery("k", Strategy::ForwardNextToken))
            .and_then(|c| c.with_recovery("o", Strategy::Noop))
            .and_then(|c| c.with_self_closing("s", SelfClosing::NextToken))
            .expect("config");
        let configs = [
            base.clone(),
            base.clone().with_trim_punctuation(false),
            base.clone().with_autoclose_on_any_tag(false),
            base.with_max_span_bytes(7).expect("limit"),
        ];
        const PIECES: [&str; 16] = [
            "a",
            "word",
            " ",
            "  ",
            "\n",
            ". ",
            ",",
            "x y",
            "tok",
            "en ",
            "\u{3000}",
            "é",
            "\n\n",
            "two words\n",
            "!?",
            "long run of text",
        ];
        const PLAIN: [&str; 4] = ["a", "plain words", " ", "x."];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut compared, mut fresh_true) = (0, 0);
        for config in &configs {
            let rules = Arc::new(Rules::new(config));
            let ids: Vec<usize> = tags.iter().filter_map(|t| rules.lookup(t)).collect();
            assert_eq!(ids.len(), tags.len());
            for _ in 0..400 {
                let ops: Vec<Op> = (0..next(24) + 1)
                    .map(|_| match next(13) {
                        0..=5 => Op::Text(PIECES[next(PIECES.len())]),
                        6 => Op::Start(ids[next(ids.len())]),
                        7 => Op::End(ids[next(ids.len())]),
                        8 => Op::SelfClosing(ids[next(ids.len())]),
                        9 => Op::Plain(PLAIN[next(PLAIN.len())]),
                        10 => Op::Query(next(4) as u8),
                        _ => Op::Flush,
                    })
                    .collect();
                let (lazy, lazy_trace, lazy_fresh) = run(&rules, &ops, false);
                let (eager, eager_trace, eager_fresh) = run(&rules, &ops, true);
                assert_eq!(lazy, eager, "{ops:?}");
                assert_eq!(format!("{lazy:?}"), format!("{eager:?}"), "{ops:?}");
                assert_eq!(lazy_trace, eager_trace, "{ops:?}");
                // Fresh over unread text errs towards `false` only.
                for (l, e) in lazy_fresh.iter().zip(&eager_fresh) {
                    assert!(!l || *e, "{ops:?}");
                }
                fresh_true += usize::from(lazy_fresh.iter().any(|&f| f));
                compared += 1;
            }
        }
        assert_eq!(compared, 1600);
        assert!(fresh_true > 0, "no script reached a fresh line");
    }
}

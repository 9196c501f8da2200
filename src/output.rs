//! The public output model: [`Document`], [`Segment`], [`Marker`], [`Annotation`], [`Event`].
//!
//! Every type here owns its data, so events can cross threads and outlive the parser. An
//! [`Annotation`] is reference counted: the same annotation attached to many segments (a long
//! span cut by other spans) is cloned by bumping a counter, not by copying its attributes.

use std::borrow::Cow;
use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use crate::config::Strategy;
use crate::name::TagName;

/// A short string held in place: `bytes[..len]`, always a whole UTF-8 string (written
/// only from a `&str`, or joined from two such), at most `N` (≤ 32) bytes. Short
/// attribute values ([`AttrStr`]) and short streamed texts (`SegText::Inline`) use it.
#[derive(Clone, Copy)]
pub(crate) struct InlineStr<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> InlineStr<N> {
    /// The empty string.
    const EMPTY: Self = InlineStr {
        len: 0,
        bytes: [0; N],
    };

    /// `s`, if it fits: copied with fixed-size moves (`text::copy_short`), for a new
    /// string made on a path that makes one per token.
    #[inline(always)]
    pub(crate) fn new(s: &str) -> Option<Self> {
        let mut t = Self::EMPTY;
        crate::text::copy_short(&mut t.bytes, s.as_bytes()).then(|| {
            t.len = s.len() as u8;
            t
        })
    }

    /// Sets the string to `s` if it fits; returns whether it did (else it is unchanged).
    /// (A plain slice copy: on attribute parsing's path `new`'s fixed-size moves cost 1.3%
    /// more instructions for `parse()` of prose.)
    fn set(&mut self, s: &str) -> bool {
        let Some(dst) = self.bytes.get_mut(..s.len()) else {
            return false;
        };
        dst.copy_from_slice(s.as_bytes());
        self.len = s.len() as u8;
        true
    }

    /// Appends `tail`, the bytes of a whole string, if it fits; returns whether it did.
    /// (Whole strings joined are a whole string again.)
    fn push(&mut self, tail: &[u8]) -> bool {
        let n = usize::from(self.len);
        let fits = self
            .bytes
            .get_mut(n..)
            .is_some_and(|dst| crate::text::copy_short(dst, tail));
        if fits {
            self.len = (n + tail.len()) as u8;
        }
        fits
    }

    /// The bytes, not checked again (as comparing, hashing and joining need them).
    pub(crate) fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }

    /// The string. (Safe code has no unchecked conversion; the bytes were copied from
    /// whole strings, so this never fails.)
    pub(crate) fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }
}

/// An attribute string: short ones (up to 22 bytes, the usual `id=3`) are stored inline,
/// longer ones on the heap, so most attributes cost no allocation.
///
/// It dereferences to `str`, compares with `str` and `String`, and converts into `String`.
#[derive(Clone)]
pub struct AttrStr(StrRepr);

/// Bytes an [`AttrStr`] holds without allocating.
const INLINE_CAP: usize = 22;

#[derive(Clone)]
enum StrRepr {
    Inline(InlineStr<INLINE_CAP>),
    Heap(Box<str>),
}

impl AttrStr {
    /// The empty string (inline).
    const EMPTY: AttrStr = AttrStr(StrRepr::Inline(InlineStr::EMPTY));

    /// Sets the string to `s`, writing short ones into the inline bytes where they are.
    fn assign(&mut self, s: &str) {
        if let StrRepr::Inline(t) = &mut self.0 {
            if t.set(s) {
                return;
            }
        }
        self.0 = StrRepr::Heap(s.into());
    }

    /// The string.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            StrRepr::Inline(t) => t.as_str(),
            StrRepr::Heap(s) => s,
        }
    }

    /// The UTF-8 bytes, without re-validating them: what comparing, ordering, hashing and
    /// name lookups need (byte order is `str` order, and equal bytes are equal strings).
    fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            StrRepr::Inline(t) => t.as_bytes(),
            StrRepr::Heap(s) => s.as_bytes(),
        }
    }
}

impl From<&str> for AttrStr {
    fn from(s: &str) -> Self {
        let mut a = AttrStr::EMPTY;
        a.assign(s);
        a
    }
}

impl From<String> for AttrStr {
    fn from(s: String) -> Self {
        if s.len() <= INLINE_CAP {
            AttrStr::from(s.as_str())
        } else {
            AttrStr(StrRepr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<std::borrow::Cow<'_, str>> for AttrStr {
    fn from(s: std::borrow::Cow<'_, str>) -> Self {
        match s {
            std::borrow::Cow::Borrowed(b) => AttrStr::from(b),
            std::borrow::Cow::Owned(o) => AttrStr::from(o),
        }
    }
}

impl From<AttrStr> for String {
    fn from(s: AttrStr) -> Self {
        match s.0 {
            StrRepr::Heap(b) => b.into_string(),
            StrRepr::Inline(..) => s.as_str().to_string(),
        }
    }
}

impl std::ops::Deref for AttrStr {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for AttrStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for AttrStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for AttrStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for AttrStr {}

impl PartialEq<str> for AttrStr {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for AttrStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for AttrStr {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for AttrStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AttrStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl std::hash::Hash for AttrStr {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for AttrStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for AttrStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The value of one attribute: a string, or `true` for a bare attribute (`<todo urgent>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttrValue {
    /// `name=value`, `name="value"` or `name='value'` (entities decoded when enabled).
    Str(AttrStr),
    /// A bare `name`, or `name=` with nothing after it.
    True,
}

impl AttrValue {
    /// The string value, or `None` for a boolean attribute.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s.as_str()),
            AttrValue::True => None,
        }
    }

    /// Whether this is the boolean `true` of a bare attribute.
    pub fn is_true(&self) -> bool {
        matches!(self, AttrValue::True)
    }
}

/// The attributes of a tag, in source order.
///
/// With [`DuplicateAttrs::Last`](crate::DuplicateAttrs::Last) or
/// [`First`](crate::DuplicateAttrs::First) each name appears once (at the position of its first
/// occurrence); with [`All`](crate::DuplicateAttrs::All) every occurrence is kept.
/// Two attribute lists are equal when they map the same names to the same values, whatever
/// their order (as the JSON output, which sorts keys, shows them).
#[derive(Debug, Clone, Default)]
pub struct Attrs {
    items: SmallVec<[(AttrStr, AttrValue); 2]>,
}

impl Attrs {
    /// An empty attribute list.
    pub fn new() -> Self {
        Attrs::default()
    }

    /// Appends `name` with `value` (`None`: a bare attribute). Both strings are copied
    /// straight into the pair's place in the list: built on the stack and moved, the inline
    /// bytes were read back right after a `memcpy` wrote them, a store-forwarding stall per
    /// attribute (DESIGN.md, decision 61).
    pub(crate) fn push(&mut self, name: &str, value: Option<Cow<'_, str>>) {
        self.items.push((AttrStr::EMPTY, AttrValue::True));
        let Some((n, v)) = self.items.last_mut() else {
            return;
        };
        n.assign(name);
        match value {
            None => {}
            // (A decoded value is moved in: a long one keeps its allocation.)
            Some(Cow::Owned(o)) => *v = AttrValue::Str(AttrStr::from(o)),
            Some(Cow::Borrowed(s)) => {
                *v = AttrValue::Str(AttrStr::EMPTY);
                if let AttrValue::Str(dst) = v {
                    dst.assign(s);
                }
            }
        }
    }

    /// The index of the first pair named `name`.
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.items
            .iter()
            .position(|(n, _)| n.as_bytes() == name.as_bytes())
    }

    pub(crate) fn set_value_at(&mut self, index: usize, value: AttrValue) {
        if let Some(item) = self.items.get_mut(index) {
            item.1 = value;
        }
    }

    /// The value of `name` (the first one kept, under `DuplicateAttrs::All`).
    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.items
            .iter()
            .find(|(n, _)| n.as_bytes() == name.as_bytes())
            .map(|(_, v)| v)
    }

    /// Every value kept for `name`, in source order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a AttrValue> + 'a {
        self.items
            .iter()
            .filter(move |(n, _)| n.as_bytes() == name.as_bytes())
            .map(|(_, v)| v)
    }

    /// All `(name, value)` pairs in source order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.items.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// Number of pairs kept.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no attributes.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The pairs grouped by name, names sorted by byte order; each group lists its values in
    /// source order. This is the shape of the JSON `attrs` object.
    pub fn grouped(&self) -> Vec<(&str, Vec<&AttrValue>)> {
        // A stable sort keeps each name's values in source order.
        let mut order: Vec<&(AttrStr, AttrValue)> = self.items.iter().collect();
        order.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(&str, Vec<&AttrValue>)> = Vec::new();
        for (n, v) in order {
            match out.last_mut() {
                Some((last, vs)) if *last == n.as_str() => vs.push(v),
                _ => out.push((n.as_str(), vec![v])),
            }
        }
        out
    }
}

impl PartialEq for Attrs {
    fn eq(&self, other: &Self) -> bool {
        if self.items.len() != other.items.len() {
            return false;
        }
        // The usual case: the same names in the same order. Then the pairs decide (with
        // duplicates kept, a name's values are compared in source order either way).
        if self
            .items
            .iter()
            .zip(other.items.iter())
            .all(|(a, b)| a.0 == b.0)
        {
            return self
                .items
                .iter()
                .zip(other.items.iter())
                .all(|(a, b)| a.1 == b.1);
        }
        self.grouped() == other.grouped()
    }
}

impl Eq for Attrs {}

/// How the tag behind an annotation was closed: the DSL's `recovery_reason`.
///
/// Offsets are source byte offsets (of the `<` of the markup that closed the tag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Close {
    /// Closed by its own end tag; the span is exactly the tag's content.
    EndTag {
        /// Source offset of the end tag.
        offset: usize,
    },
    /// Closed explicitly by a start tag of the same name (`autoclose_on_same_tag`).
    Reopened {
        /// Source offset of the new start tag.
        offset: usize,
    },
    /// Closed by recovery because a later recognized tag closed it: a start or self-closing
    /// tag (`autoclose_on_any_tag`, or a same-name reopen of an older tag), or the end tag of
    /// an older open tag.
    AutoClosed {
        /// Source offset of the tag that caused it.
        offset: usize,
    },
    /// Closed by recovery at the end of the input.
    EndOfInput,
    /// Closed by recovery because its content reached `max_span_bytes`.
    SpanLimit,
    /// A self-closing tag: a marker, no span.
    SelfClosing,
}

impl Close {
    /// Whether the span was chosen by a recovery strategy (the tag was not closed explicitly).
    pub fn is_recovery(&self) -> bool {
        matches!(
            self,
            Close::AutoClosed { .. } | Close::EndOfInput | Close::SpanLimit
        )
    }
}

#[derive(Debug, PartialEq, Eq)]
struct AnnotationData {
    tag: TagName,
    attrs: Attrs,
    source_offset: usize,
    /// How the tag closed (set once, when it closes) and its final span (set once it is
    /// known: when the tag closes, or for a `retro_claim` fallback when the tag it falls
    /// back to closes).
    outcome: Outcome,
}

/// Write-once fields of an annotation, readable from any thread while its parser still
/// runs: each is written by that parser alone (through `&mut` access to it, so by one
/// thread at a time), before a flag that publishes it (`Release`; readers `Acquire` the
/// flags first), and never again. Atomics rather than two `OnceLock`s, whose `set` costs a
/// call into the `Once` machinery per tag (3% of one-shot parsing on tag-dense text). Since
/// the writer is the only one, it sets a flag with a plain `Release` store of the flags it
/// read, not a locked read-modify-write (`fetch_or`), which on x86 also waits for every
/// store before it to reach the cache (DESIGN.md, decision 112).
#[derive(Default)]
struct Outcome {
    /// `CLOSE_SET`, `SPAN_SET`, `SPAN_SOME`.
    flags: AtomicU8,
    /// The `Close` kind in bits 0–2 (0–5, as `Outcome::set_close` numbers them) and, from
    /// bit 3, the strategy's position in `Strategy::ALL` plus one (0: none).
    close: AtomicU8,
    /// The `Close` variant's offset, if it has one.
    close_offset: AtomicUsize,
    span_start: AtomicUsize,
    span_end: AtomicUsize,
}

const CLOSE_SET: u8 = 1;
const SPAN_SET: u8 = 2;
const SPAN_SOME: u8 = 4;

impl Outcome {
    fn set_close(&self, close: Close, strategy: Option<Strategy>) {
        let flags = self.flags.load(Ordering::Relaxed);
        if flags & CLOSE_SET != 0 {
            return;
        }
        let (kind, offset) = match close {
            Close::EndTag { offset } => (0, offset),
            Close::Reopened { offset } => (1, offset),
            Close::AutoClosed { offset } => (2, offset),
            Close::EndOfInput => (3, 0),
            Close::SpanLimit => (4, 0),
            Close::SelfClosing => (5, 0),
        };
        // (A fieldless enum's `as` cast is its declaration index, the order of `ALL`.)
        let strategy = strategy.map_or(0, |s| s as u8 + 1);
        self.close_offset.store(offset, Ordering::Relaxed);
        self.close.store(kind | strategy << 3, Ordering::Relaxed);
        self.flags.store(flags | CLOSE_SET, Ordering::Release);
    }

    fn set_span(&self, span: Option<(usize, usize)>) {
        let flags = self.flags.load(Ordering::Relaxed);
        if flags & SPAN_SET != 0 {
            return;
        }
        let some = match span {
            Some((a, b)) => {
                self.span_start.store(a, Ordering::Relaxed);
                self.span_end.store(b, Ordering::Relaxed);
                SPAN_SOME
            }
            None => 0,
        };
        self.flags.store(flags | SPAN_SET | some, Ordering::Release);
    }

    fn close(&self) -> Option<(Close, Option<Strategy>)> {
        if self.flags.load(Ordering::Acquire) & CLOSE_SET == 0 {
            return None;
        }
        let code = self.close.load(Ordering::Relaxed);
        let offset = self.close_offset.load(Ordering::Relaxed);
        let close = match code & 7 {
            0 => Close::EndTag { offset },
            1 => Close::Reopened { offset },
            2 => Close::AutoClosed { offset },
            3 => Close::EndOfInput,
            4 => Close::SpanLimit,
            _ => Close::SelfClosing,
        };
        let strategy = usize::from(code >> 3)
            .checked_sub(1)
            .and_then(|i| Strategy::ALL.get(i).copied());
        Some((close, strategy))
    }

    fn span(&self) -> Option<Option<(usize, usize)>> {
        let flags = self.flags.load(Ordering::Acquire);
        if flags & SPAN_SET == 0 {
            return None;
        }
        Some((flags & SPAN_SOME != 0).then(|| {
            (
                self.span_start.load(Ordering::Relaxed),
                self.span_end.load(Ordering::Relaxed),
            )
        }))
    }
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        self.close() == other.close() && self.span() == other.span()
    }
}

impl Eq for Outcome {}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outcome")
            .field("close", &self.close())
            .field("span", &self.span())
            .finish()
    }
}

/// One recognized tag's annotation: its name (as configured), attributes, where it came from
/// and how it was closed.
///
/// An annotation is created when its tag opens. Text inside a tag whose span cannot change
/// (e.g. `forward_until_tag` content) is emitted before the tag closes, so an annotation in
/// an event may not know yet how its tag will close: [`close`](Annotation::close) is `None`
/// until then. Every event carrying the annotation shares it, so the information appears
/// in all of them once known; after [`finish`](crate::StreamParser::finish) it is always set.
///
/// Cloning is cheap (reference counted). `==` compares everything, including the source
/// offset and how the tag closed; [`Annotation::same_value`] compares only what the JSON
/// output shows (tag and attributes), which is what the canonical form merges on.
#[derive(Clone, PartialEq, Eq)]
pub struct Annotation(Arc<AnnotationData>);

impl Annotation {
    /// An annotation for a tag that has just opened.
    pub(crate) fn open(tag: TagName, attrs: Attrs, source_offset: usize) -> Self {
        Annotation(Arc::new(AnnotationData {
            tag,
            attrs,
            source_offset,
            outcome: Outcome::default(),
        }))
    }

    /// An annotation whose tag is already closed (markers).
    pub(crate) fn closed(tag: TagName, attrs: Attrs, source_offset: usize, close: Close) -> Self {
        let outcome = Outcome::default();
        outcome.set_close(close, None);
        Annotation(Arc::new(AnnotationData {
            tag,
            attrs,
            source_offset,
            outcome,
        }))
    }

    /// Records how the tag closed (first call wins).
    pub(crate) fn set_close(&self, close: Close, strategy: Option<Strategy>) {
        self.0.outcome.set_close(close, strategy);
    }

    /// Records the final span (first call wins).
    pub(crate) fn set_span(&self, span: Option<(usize, usize)>) {
        self.0.outcome.set_span(span);
    }

    /// The tag name, spelled as in the configuration (not as in the input).
    pub fn tag(&self) -> &str {
        self.0.tag.as_str()
    }

    /// The tag's attributes.
    pub fn attrs(&self) -> &Attrs {
        &self.0.attrs
    }

    /// Source byte offset of the tag's `<`.
    pub fn source_offset(&self) -> usize {
        self.0.source_offset
    }

    /// How the tag was closed, or `None` while it is still open (see the type's docs).
    pub fn close(&self) -> Option<Close> {
        self.0.outcome.close().map(|c| c.0)
    }

    /// The output byte range this tag annotates, once its final span is known: `None` while
    /// the tag is open, for markers, and for a tag whose span is empty.
    ///
    /// ```
    /// use kindaxml_stream::{parse, Config};
    /// let doc = parse("Grass is green <cite id=2>.", &Config::default().with_tags(["cite"])?);
    /// let cite = &doc.segments()[0].annotations()[0];
    /// assert_eq!(cite.span(), Some(0..14));
    /// # Ok::<(), kindaxml_stream::ConfigError>(())
    /// ```
    pub fn span(&self) -> Option<std::ops::Range<usize>> {
        self.0.outcome.span().flatten().map(|(a, b)| a..b)
    }

    /// The recovery strategy that chose the span, when the tag was closed by recovery.
    pub fn strategy(&self) -> Option<Strategy> {
        self.0.outcome.close().and_then(|c| c.1)
    }

    /// Whether the span was chosen by recovery.
    pub fn is_recovered(&self) -> bool {
        self.close().is_some_and(|c| c.is_recovery())
    }

    /// A new annotation equal to this one, in an allocation of its own (for
    /// [`Document::rebuilt`]).
    fn copied(&self) -> Annotation {
        let outcome = Outcome::default();
        if let Some((close, strategy)) = self.0.outcome.close() {
            outcome.set_close(close, strategy);
        }
        if let Some(span) = self.0.outcome.span() {
            outcome.set_span(span);
        }
        Annotation(Arc::new(AnnotationData {
            tag: self.0.tag.clone(),
            attrs: self.0.attrs.clone(),
            source_offset: self.0.source_offset,
            outcome,
        }))
    }

    /// Equal tag and attributes (what the canonical form and the JSON output compare).
    #[inline]
    pub fn same_value(&self, other: &Annotation) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.tag == other.0.tag && self.0.attrs == other.0.attrs)
    }
}

impl fmt::Debug for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Annotation")
            .field("tag", &self.0.tag)
            .field("attrs", &self.0.attrs)
            .field("source_offset", &self.0.source_offset)
            .field("close", &self.close())
            .field("strategy", &self.strategy())
            .finish()
    }
}

/// A list of annotations, outermost first.
pub type Annotations = SmallVec<[Annotation; 2]>;

/// A segment's annotations: its own short list, or a long one shared (by reference count)
/// with the other segments that carry the same list. Text streamed inside deeply nested
/// open tags is emitted update by update, every segment covered by all of them: sharing
/// makes each such segment cost the same whatever the depth (DESIGN.md, decision 29).
/// (The size of the inline list this replaced: 24 bytes.)
#[derive(Clone)]
pub(crate) enum SegAnnotations {
    Zero,
    One([Annotation; 1]),
    Two([Annotation; 2]),
    /// The first `len` annotations of a list that other segments share (decision 39). (A
    /// `u32` keeps the type at 24 bytes; a list of 2^32 annotations would need as many tags
    /// held at once, 32 GiB of references alone.)
    Shared(Arc<[Annotation]>, u32),
}

impl std::ops::Deref for SegAnnotations {
    type Target = [Annotation];
    fn deref(&self) -> &[Annotation] {
        match self {
            SegAnnotations::Zero => &[],
            SegAnnotations::One(v) => v,
            SegAnnotations::Two(v) => v,
            SegAnnotations::Shared(v, len) => v.get(..*len as usize).unwrap_or_default(),
        }
    }
}

impl PartialEq for SegAnnotations {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for SegAnnotations {}

impl fmt::Debug for SegAnnotations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// A run of output text with the annotations that cover all of it.
///
/// The segments emitted by one `update` share one buffer holding that update's text (at
/// most one allocation per update, none while the parser's pooled buffer is free, and never
/// one per segment; `parse()` emits once for an input of up to
/// 64 KiB, so all its segments share one buffer, and about once per 64 KiB of annotated text
/// past that); a segment keeps that buffer alive. A large emission's buffer is the parser's
/// own text buffer, handed over, which may also hold up to an eighth as much text emitted
/// earlier plus spare capacity. Text of up to 31 bytes that an update emits as one segment
/// covered by exactly the open tags (a token streamed inside tags, or outside any tag, with
/// no span or marker due) is held in the segment itself, with no buffer; never in
/// `parse()`'s document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub(crate) text: SegText,
    pub(crate) start: usize,
    pub(crate) annotations: SegAnnotations,
}

/// The buffer an emission's segments share: a copy of the emitted text (`Copied`, one
/// allocation), the builder's whole text buffer handed over without copying (`Adopted`,
/// for large emissions that empty the builder; see DESIGN.md decision 27), or the
/// builder's small reusable buffer holding a short emission (`Pooled`, rewritten only
/// once no event holds it any more; decision 31).
#[derive(Clone)]
pub(crate) enum SharedBuf {
    Copied(Arc<str>),
    Adopted(Arc<String>),
    Pooled(Arc<String>),
}

impl SharedBuf {
    fn as_str(&self) -> &str {
        match self {
            SharedBuf::Copied(s) => s,
            SharedBuf::Adopted(s) | SharedBuf::Pooled(s) => s,
        }
    }

    fn same(&self, other: &SharedBuf) -> bool {
        match (self, other) {
            (SharedBuf::Copied(a), SharedBuf::Copied(b)) => Arc::ptr_eq(a, b),
            (SharedBuf::Adopted(a), SharedBuf::Adopted(b))
            | (SharedBuf::Pooled(a), SharedBuf::Pooled(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Whether this is the builder's text buffer, handed over (decision 27).
    pub(crate) fn adopted(&self) -> bool {
        matches!(self, SharedBuf::Adopted(_))
    }
}

/// Bytes of text a segment holds inline, in the room its other forms take anyway
/// (decision 89).
pub(crate) const INLINE_TEXT: usize = 31;

/// A segment's text: a range of a shared buffer, a short text held inline, or its own
/// string once merged.
#[derive(Clone)]
pub(crate) enum SegText {
    /// `buf[lo..hi]`; both are char boundaries of `buf`.
    Shared {
        buf: SharedBuf,
        lo: usize,
        hi: usize,
    },
    /// No buffer to share, so no reference count to raise when it is made and lower when
    /// it is dropped.
    Inline(InlineStr<INLINE_TEXT>),
    Owned(String),
}

impl SegText {
    /// `s` held inline, if it fits.
    #[inline(always)]
    pub(crate) fn inline(s: &str) -> Option<SegText> {
        InlineStr::new(s).map(SegText::Inline)
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            // `lo..hi` are char boundaries within `buf` (set by the builder), so `get` succeeds.
            SegText::Shared { buf, lo, hi } => buf.as_str().get(*lo..*hi).unwrap_or_default(),
            SegText::Inline(t) => t.as_str(),
            SegText::Owned(s) => s,
        }
    }

    /// The text's bytes, not checked again (as comparing and joining need them).
    fn as_bytes(&self) -> &[u8] {
        match self {
            SegText::Inline(t) => t.as_bytes(),
            SegText::Shared { .. } | SegText::Owned(_) => self.as_str().as_bytes(),
        }
    }

    fn len(&self) -> usize {
        match self {
            SegText::Shared { lo, hi, .. } => hi - lo,
            SegText::Inline(t) => usize::from(t.len),
            SegText::Owned(s) => s.len(),
        }
    }

    /// Appends `other`: extends the range when it continues in the same buffer, else copies.
    fn append(&mut self, other: &SegText) {
        if let (
            SegText::Shared { buf, hi, .. },
            SegText::Shared {
                buf: b2,
                lo: l2,
                hi: h2,
            },
        ) = (&mut *self, other)
        {
            if buf.same(b2) && *hi == *l2 {
                *hi = *h2;
                return;
            }
        }
        if let SegText::Inline(t) = self {
            if t.push(other.as_bytes()) {
                return;
            }
        }
        match self {
            SegText::Owned(s) => s.push_str(other.as_str()),
            SegText::Shared { .. } | SegText::Inline(_) => {
                let mut s = String::with_capacity(self.len() + other.len());
                s.push_str(self.as_str());
                s.push_str(other.as_str());
                *self = SegText::Owned(s);
            }
        }
    }

    fn into_string(self) -> String {
        match self {
            SegText::Owned(s) => s,
            SegText::Shared { .. } | SegText::Inline(_) => self.as_str().to_string(),
        }
    }
}

impl PartialEq for SegText {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for SegText {}

impl fmt::Debug for SegText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Segment {
    /// The text (never empty).
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// Takes the text out of the segment.
    pub fn into_text(self) -> String {
        self.text.into_string()
    }

    /// Byte offset of the segment's first byte in the output text.
    pub fn start(&self) -> usize {
        self.start
    }

    /// Byte offset just past the segment's last byte in the output text.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// The annotations covering the segment, outermost first: by span start, then longer span
    /// first, then creation order.
    pub fn annotations(&self) -> &[Annotation] {
        &self.annotations
    }

    /// Whether `other` carries annotations equal by value, in the same order.
    #[inline]
    pub fn same_annotations(&self, other: &[Annotation]) -> bool {
        let own: &[Annotation] = &self.annotations;
        own.len() == other.len()
            // One shared list (the usual case for long lists): the same annotations.
            && (std::ptr::eq(own.as_ptr(), other.as_ptr())
                || own.iter().zip(other).all(|(a, b)| a.same_value(b)))
    }
}

/// A self-closing recognized tag: a zero-width annotation at a position of the output text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub(crate) pos: usize,
    pub(crate) annotation: Annotation,
}

impl Marker {
    /// Byte offset in the output text.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The tag and its attributes.
    pub fn annotation(&self) -> &Annotation {
        &self.annotation
    }
}

/// One finalized piece of output, in document order. Once emitted it never changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Text with its annotations. Consecutive text events may carry equal annotation lists;
    /// [`Document::push`] merges them.
    Text(Segment),
    /// A marker at a position of the output text; all text before that position has already
    /// been emitted.
    Marker(Marker),
}

/// A whole parse in canonical form: adjacent segments with equal annotation lists merged.
///
/// The text lives in the segments; [`text`](Document::text) joins them the first time it is
/// asked for (and again only after more events are pushed).
#[derive(Debug, Clone, Default)]
pub struct Document {
    segments: Vec<Segment>,
    markers: Vec<Marker>,
    len: usize,
    text: OnceLock<String>,
}

impl PartialEq for Document {
    fn eq(&self, other: &Self) -> bool {
        self.segments == other.segments && self.markers == other.markers
    }
}

impl Eq for Document {}

impl Document {
    /// An empty document, to [`push`](Document::push) events into.
    pub fn new() -> Self {
        Document::default()
    }

    /// Builds a document from a complete event stream.
    pub fn from_events<I: IntoIterator<Item = Event>>(events: I) -> Self {
        let mut d = Document::new();
        d.extend(events);
        d
    }

    /// Appends one event, merging text into the last segment when the annotation lists are
    /// equal by value.
    pub fn push(&mut self, event: Event) {
        match event {
            Event::Text(seg) => self.push_text(seg.text, seg.annotations),
            Event::Marker(m) => self.markers.push(m),
        }
    }

    /// [`push`](Document::push) of a text event, from its parts. Inlined into the
    /// emission code that `parse()` runs (`builder::Out`): a segment built there as an
    /// `Event` and passed by reference to an out-of-line `push` was read back in 16-byte
    /// pieces just after being written in 8-byte ones, a store-forwarding stall on every
    /// segment (DESIGN.md, decision 60).
    #[inline(always)]
    pub(crate) fn push_text(&mut self, text: SegText, annotations: SegAnnotations) {
        let len = text.len();
        if len == 0 {
            return;
        }
        if self.text.get().is_some() {
            self.text = OnceLock::new();
        }
        let start = self.len;
        self.len += len;
        if let Some(last) = self.segments.last_mut() {
            if last.same_annotations(&annotations) {
                last.text.append(&text);
                return;
            }
        }
        self.segments.push(Segment {
            text,
            start,
            annotations,
        });
    }

    /// The whole output text.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| {
            let mut t = String::with_capacity(self.len);
            for s in &self.segments {
                t.push_str(s.text.as_str());
            }
            t
        })
    }

    /// Room for `segments` more segments and `markers` more markers.
    pub(crate) fn reserve(&mut self, segments: usize, markers: usize) {
        self.segments.reserve(segments);
        self.markers.reserve(markers);
    }

    /// Length of the output text in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no output text.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The segments; they concatenate to [`text`](Document::text).
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The markers, in document order.
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// A document equal to this one, built from scratch with about the least work the
    /// output types allow: text of more than [`INLINE_TEXT`] bytes copied once into one
    /// buffer, each such segment a range of it, shorter text held in its segment (no
    /// reference count); one new allocation per annotation (tag name interned or shared,
    /// attributes copied, how it closed and its span set), shared by the segments it
    /// covers as in this document, and a shared list of annotations copied once for the
    /// segments that share it; the segment and marker lists sized exactly. Nothing is
    /// read, decided or merged. A parser that returns this document does at least about
    /// this much, so its time is the floor of `parse()`'s (DESIGN.md, decision 115), which
    /// the benchmarks time next to it. Not part of the stable API.
    #[doc(hidden)]
    pub fn rebuilt(&self) -> Document {
        // (One test decides where a segment's text goes, here and below.)
        let shared = |t: &SegText| t.len() > INLINE_TEXT;
        let mut text = String::with_capacity(self.len);
        for s in &self.segments {
            if shared(&s.text) {
                text.push_str(s.text.as_str());
            }
        }
        let buf = SharedBuf::Adopted(Arc::new(text));
        let mut segments: Vec<Segment> = Vec::with_capacity(self.segments.len());
        // An annotation's span is one range of the output, so the segments carrying it
        // are neighbours: each is looked up among the previous segment's only; in a list,
        // first at its own position, so that a list of `d` costs O(d), not O(d²).
        let mut prev_old: &[Annotation] = &[];
        // The last shared list met, and its copy.
        let mut last_old: Option<&Arc<[Annotation]>> = None;
        let mut last_new: Option<Arc<[Annotation]>> = None;
        let mut lo = 0;
        for s in &self.segments {
            let annotations = {
                let prev_new: &[Annotation] = segments.last().map_or(&[], |l| &l.annotations);
                let same = |a: &Annotation| prev_old.iter().position(|p| Arc::ptr_eq(&p.0, &a.0));
                let copy = |same: Option<usize>, a: &Annotation| -> Annotation {
                    match same.and_then(|i| prev_new.get(i)) {
                        Some(n) => n.clone(),
                        None => a.copied(),
                    }
                };
                match &s.annotations {
                    SegAnnotations::Zero => SegAnnotations::Zero,
                    SegAnnotations::One([a]) => SegAnnotations::One([copy(same(a), a)]),
                    SegAnnotations::Two([a, b]) => {
                        SegAnnotations::Two([copy(same(a), a), copy(same(b), b)])
                    }
                    SegAnnotations::Shared(old, len) => {
                        let new = match (last_old, &last_new) {
                            (Some(o), Some(n)) if Arc::ptr_eq(o, old) => n.clone(),
                            // Each entry first at its own position (nested tags keep
                            // theirs from segment to segment).
                            _ => old
                                .iter()
                                .enumerate()
                                .map(|(i, a)| match prev_old.get(i) {
                                    Some(p) if Arc::ptr_eq(&p.0, &a.0) => copy(Some(i), a),
                                    _ => copy(same(a), a),
                                })
                                .collect::<Arc<[Annotation]>>(),
                        };
                        last_old = Some(old);
                        last_new = Some(new.clone());
                        SegAnnotations::Shared(new, *len)
                    }
                }
            };
            let text = if shared(&s.text) {
                let hi = lo + s.text.len();
                let range = SegText::Shared {
                    buf: buf.clone(),
                    lo,
                    hi,
                };
                lo = hi;
                range
            } else {
                let t = s.text.as_str();
                SegText::inline(t).unwrap_or_else(|| SegText::Owned(t.to_owned()))
            };
            segments.push(Segment {
                text,
                start: s.start,
                annotations,
            });
            prev_old = &s.annotations;
        }
        let mut markers = Vec::with_capacity(self.markers.len());
        for m in &self.markers {
            markers.push(Marker {
                pos: m.pos,
                annotation: m.annotation.copied(),
            });
        }
        Document {
            segments,
            markers,
            len: self.len,
            text: OnceLock::new(),
        }
    }
}

impl Extend<Event> for Document {
    fn extend<T: IntoIterator<Item = Event>>(&mut self, iter: T) {
        let iter = iter.into_iter();
        // Most events are segments, and few merge: room for them all up front.
        self.segments.reserve(iter.size_hint().0);
        for e in iter {
            self.push(e);
        }
    }
}

impl FromIterator<Event> for Document {
    fn from_iter<T: IntoIterator<Item = Event>>(iter: T) -> Self {
        Document::from_events(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Document::rebuilt` (the benchmarks' floor, decision 115) gives the same document in
    /// allocations of its own: no annotation or text buffer shared with the original, text
    /// of up to `INLINE_TEXT` bytes held inline and longer text in one buffer, and an
    /// annotation or a shared list of annotations shared by neighbouring segments there is
    /// shared here too (one allocation each, not one per segment). The inputs nest four
    /// deep (lists of three and four, kept as shared lists), overlap (postfix cites over
    /// closed tags), and place markers.
    #[test]
    fn rebuilt_document_is_equal_and_shares_as_the_original_does() {
        let config = crate::Config::default()
            .with_tags(["a", "b", "c", "d", "cite", "todo"])
            .unwrap_or_default()
            .with_autoclose_on_any_tag(false);
        let inputs = [
            "x <a k=1>one <b>two <c q='v'>three <d>four</d> 3</c> 2</b> 1</a> y",
            "Grass is <b>green</b> and tall <cite id=2>. More <todo who=\"me\"/> here <cite id=3>.",
            "<a>open <b>never closed\nnext line, long enough not to be held inline <cite id=9 flag> and <todo/>",
            "",
            "plain text only",
        ];
        let list = |s: &Segment| match &s.annotations {
            SegAnnotations::Shared(l, _) => Some(l.clone()),
            _ => None,
        };
        for input in inputs {
            let doc = crate::parse(input, &config);
            let new = doc.rebuilt();
            assert_eq!(new, doc, "{input}");
            assert_eq!(new.len(), doc.len(), "{input}");
            let (old_s, new_s) = (doc.segments(), new.segments());
            assert_eq!(old_s.len(), new_s.len(), "{input}");
            let mut new_buf: Option<SharedBuf> = None;
            for (o, n) in old_s.iter().zip(new_s) {
                match &n.text {
                    SegText::Inline(_) => assert!(n.text.len() <= INLINE_TEXT, "{input}"),
                    SegText::Shared { buf, .. } => {
                        assert!(n.text.len() > INLINE_TEXT, "{input}");
                        // One buffer for all of them, not the original's.
                        assert!(
                            new_buf.get_or_insert_with(|| buf.clone()).same(buf),
                            "{input}"
                        );
                        if let SegText::Shared { buf: ob, .. } = &o.text {
                            assert!(!ob.same(buf), "{input}");
                        }
                    }
                    SegText::Owned(_) => panic!("{input}: owned text"),
                }
                for (a, b) in o.annotations.iter().zip(n.annotations.iter()) {
                    assert!(!Arc::ptr_eq(&a.0, &b.0), "{input}");
                }
                if let (Some(ol), Some(nl)) = (list(o), list(n)) {
                    assert!(!Arc::ptr_eq(&ol, &nl), "{input}");
                }
            }
            // Sharing between every two segments (not only neighbours) is the same, of
            // annotations and of lists.
            let flat = |s: &[Segment]| -> Vec<Annotation> {
                s.iter()
                    .flat_map(|s| s.annotations.iter().cloned())
                    .collect()
            };
            let (old_a, new_a) = (flat(old_s), flat(new_s));
            for i in 0..old_a.len() {
                for j in 0..old_a.len() {
                    assert_eq!(
                        Arc::ptr_eq(&old_a[i].0, &old_a[j].0),
                        Arc::ptr_eq(&new_a[i].0, &new_a[j].0),
                        "{input}: {i} {j}"
                    );
                }
            }
            for i in 0..old_s.len() {
                for j in 0..old_s.len() {
                    let shared = |s: &[Segment]| match (list(&s[i]), list(&s[j])) {
                        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
                        _ => false,
                    };
                    assert_eq!(shared(old_s), shared(new_s), "{input}: lists {i} {j}");
                }
            }
            for (o, n) in doc.markers().iter().zip(new.markers()) {
                assert!(!Arc::ptr_eq(&o.annotation.0, &n.annotation.0), "{input}");
            }
            assert_eq!(new.markers().len(), doc.markers().len(), "{input}");
        }
        // What the inputs were chosen to hold: a list of four (a shared list; one shared by
        // several segments is the next test's), markers, and text both sides of the inline
        // limit.
        let nested = crate::parse(inputs[0], &config);
        assert!(nested
            .segments()
            .iter()
            .filter_map(list)
            .any(|l| l.len() == 4));
        assert_eq!(crate::parse(inputs[1], &config).markers().len(), 1);
        assert_eq!(crate::parse(inputs[2], &config).markers().len(), 1);
        let texts = crate::parse(inputs[2], &config).rebuilt();
        assert!(texts
            .segments()
            .iter()
            .any(|s| matches!(s.text, SegText::Inline(_))));
        assert!(texts
            .segments()
            .iter()
            .any(|s| matches!(s.text, SegText::Shared { .. })));
    }

    /// A list of annotations shared by several segments (as a stream's segments share one
    /// inside nested open tags, and `parse()`'s where the innermost spans end inside an
    /// emission, decision 39) is copied once, with its annotations, and shared by the same
    /// segments.
    #[test]
    fn rebuilt_document_copies_a_shared_list_once() {
        let name = TagName::new("n");
        let anns: Vec<Annotation> = (0..4)
            .map(|i| {
                let a = Annotation::open(name.clone(), Attrs::new(), i);
                a.set_close(Close::EndOfInput, None);
                a.set_span(Some((0, 12)));
                a
            })
            .collect();
        let l: Arc<[Annotation]> = anns.iter().cloned().collect();
        let mut doc = Document::new();
        for (i, (t, n)) in [("aaaa", 3), ("bbbb", 4), ("cccc", 3)]
            .into_iter()
            .enumerate()
        {
            doc.push_text(
                SegText::Owned(t.into()),
                SegAnnotations::Shared(l.clone(), n),
            );
            assert_eq!(doc.segments().len(), i + 1);
        }
        let new = doc.rebuilt();
        assert_eq!(new, doc);
        let lists: Vec<Arc<[Annotation]>> = new
            .segments()
            .iter()
            .map(|s| match &s.annotations {
                SegAnnotations::Shared(l, _) => l.clone(),
                _ => panic!("not a shared list"),
            })
            .collect();
        assert!(!Arc::ptr_eq(&lists[0], &l));
        assert!(lists.iter().all(|x| Arc::ptr_eq(x, &lists[0])));
        assert_eq!(lists[0].len(), 4);
        for (o, n) in l.iter().zip(lists[0].iter()) {
            assert!(!Arc::ptr_eq(&o.0, &n.0));
            assert_eq!(o, n);
        }
        // Three short texts, each held inline.
        assert!(new
            .segments()
            .iter()
            .all(|s| matches!(s.text, SegText::Inline(_))));
    }

    /// Inline text takes no more room than a shared range: a segment is as large as before
    /// decision 89. (On 64-bit targets, where 31 bytes are what that room holds.)
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn inline_text_fits_in_a_shared_range() {
        let shared = std::mem::size_of::<SharedBuf>() + 2 * std::mem::size_of::<usize>();
        assert_eq!(std::mem::size_of::<SegText>(), shared);
        let rest = std::mem::size_of::<usize>() + std::mem::size_of::<SegAnnotations>();
        assert_eq!(std::mem::size_of::<Segment>(), shared + rest);
    }

    /// Inline text reads back as written, and appending keeps it inline while it fits,
    /// then moves it to its own string.
    #[test]
    fn inline_text_appends_in_place_then_spills() {
        let mut t = SegText::inline("héllo").unwrap();
        assert_eq!(t.as_str(), "héllo");
        assert_eq!(t.len(), 6);
        t.append(&SegText::inline(", wörld").unwrap());
        assert!(matches!(t, SegText::Inline(_)));
        assert_eq!(t.as_str(), "héllo, wörld");
        // A text of another kind that fits joins in place too.
        t.append(&SegText::Owned("!".into()));
        assert!(matches!(t, SegText::Inline(_)));
        assert_eq!(t.as_str(), "héllo, wörld!");
        let long = "x".repeat(INLINE_TEXT);
        assert!(SegText::inline(&long).is_some());
        assert!(SegText::inline(&format!("{long}y")).is_none());
        t.append(&SegText::inline(&long).unwrap());
        assert!(matches!(t, SegText::Owned(_)));
        assert_eq!(t.as_str(), format!("héllo, wörld!{long}"));
        assert_eq!(t.into_string(), format!("héllo, wörld!{long}"));
    }

    /// Every close kind and strategy reads back as written, once; the first write wins, and
    /// nothing reads as set before it is.
    #[test]
    fn outcome_fields_read_back_as_written_first_write_wins() {
        let closes = [
            Close::EndTag { offset: 7 },
            Close::Reopened { offset: usize::MAX },
            Close::AutoClosed { offset: 0 },
            Close::EndOfInput,
            Close::SpanLimit,
            Close::SelfClosing,
        ];
        let strategies = std::iter::once(None).chain(Strategy::ALL.iter().copied().map(Some));
        for strategy in strategies {
            for close in closes {
                let a = Annotation::open(TagName::new("cite"), Attrs::default(), 3);
                assert_eq!((a.close(), a.strategy(), a.span()), (None, None, None));
                a.set_close(close, strategy);
                a.set_close(Close::EndOfInput, Some(Strategy::Noop));
                assert_eq!((a.close(), a.strategy()), (Some(close), strategy));
                assert_eq!(a.span(), None);
                a.set_span(Some((2, usize::MAX)));
                a.set_span(Some((0, 1)));
                assert_eq!(a.span(), Some(2..usize::MAX));
                assert_eq!((a.close(), a.strategy()), (Some(close), strategy));
            }
        }
        // A span set to none stays none (and reads as such).
        let a = Annotation::closed(
            TagName::new("todo"),
            Attrs::default(),
            0,
            Close::SelfClosing,
        );
        assert_eq!(a.close(), Some(Close::SelfClosing));
        a.set_span(None);
        a.set_span(Some((1, 2)));
        assert_eq!(a.span(), None);
        assert_eq!(a.0.outcome.span(), Some(None));
    }
}

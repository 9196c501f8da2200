//! The lexical half of the machine (SPEC §2, E1–E3, E6): finds tags, CDATA, character
//! references, markdown code, raw content and declarations in the input, and hands text and
//! markup to the [`Builder`].
//!
//! The tokenizer is fed `&str` chunks that hold whole characters (the UTF-8 layer keeps a
//! split character back). Everything it has seen of an unfinished construct is explicit
//! state: the bytes of a tag candidate or code span (bounded by `max_tag_bytes`), the
//! characters of a reference (at most 32 bytes), how much of a delimiter matched. Nothing is
//! rescanned on the next chunk.
//!
//! ```text
//!  state         input                  next state / action
//!  -----------   --------------------   ------------------------------------------------
//!  Text          plain run              text (memchr jumps to the next `<`, `&`, `` ` ``)
//!  Text          `<`                    Lt
//!  Text          `&` (decoding on)      Entity
//!  Text          `` ` `` (markdown on)  Backticks
//!  Text          `~` at a line start    Tildes (line start: ≤ 3 spaces after a newline)
//!  Lt            `!`                    Bang (CDATA; comment / DOCTYPE in drop mode)
//!  Lt            `?` (drop mode)        Decl(Pi)
//!  Lt            `/`                    Tag(EndSlash)
//!  Lt            [A-Za-z]               Tag(Name), char not consumed
//!  Lt            other                  text "<", Text, char not consumed
//!  Bang          a matching char        Bang, or Cdata / Decl when an opener completes
//!  Bang          other                  text "<!…", Text, char not consumed
//!  Cdata(n)      `]`                    Cdata(min(n+1,2)) (a third `]` is content)
//!  Cdata(2)      `>`                    Text (the delimiters produce no text)
//!  Decl          its terminator         dropped whole, Text
//!  Entity        part of a reference    Entity; `;` completing it: decoded char, Text
//!  Entity        other                  text of what was taken, Text, char not consumed
//!  Tag           `>`                    complete tag: Builder; Raw if a raw start tag
//!  Backticks(n)  other                  FenceInfo at a line start with n ≥ 3, else CodeSpan
//!  FenceInfo     `\n` / `` ` ``         Fence / CodeSpan
//!  CodeSpan(n)   run of exactly n `` ` `` span text, Text; `\n` first: literal run, replay
//!  Tildes(n)     other                  Fence if n ≥ 3, else text
//!  Fence         a closing fence line   Text (everything in between is text)
//!  Raw           `<` + its name         RawName → RawTag (only its own tags count)
//!  RawTag        its end tag at depth 1 Builder end tag, Text
//!  Literal       anything               text (TagMatcher's leading-block mode, after it)
//! ```
//!
//! A candidate aborts (SPEC §2) when its name is not followed by whitespace, `>` or `/>`,
//! on an unquoted `<`, on a blank line, past `max_tag_bytes`, or at the end of input; a code
//! span or declaration aborts when it does not close in time. The construct's first char is
//! then literal and scanning resumes right after it: the remaining bytes are *replayed*
//! through the machine from an explicit stack, not by recursion, and only when they hold a
//! byte that can start a construct.
//!
//! Inside `Tag` the lexer's [`Phase`] (name, attribute name, after `=`, a `"`- or `'`-quoted
//! value, …) moves by one load per ASCII byte from `LEX`, a table built at compile time
//! from `Phase::step`, which is the rule as written; a newline or a non-ASCII char takes
//! `Phase::step` itself.
//!
//! A short chunk arriving in `Lt` or `Tag` that neither completes nor aborts the candidate
//! only grows it, so `Tokenizer::take_tag_chunk` takes it without the dispatch loop (the
//! parser skips its flush too; a one-byte chunk is decided by its `LEX` entry alone, in
//! `Tokenizer::take_tag_byte`); a chunk with a `>`, or that aborts, goes through `run`.

use crate::attrs::parse_attrs;
use crate::builder::Builder;
use crate::config::{is_name_char, Declarations, Rules, StrayEndTagPolicy, UnknownMode, NAME_CHAR};
use crate::entity::{EntityLexer, Step};
use crate::text::{as_text, decode_at, find1, find2, find3, is_ws_byte};

const CDATA_OPEN: &[u8; 7] = b"[CDATA[";
const DOCTYPE: &[u8; 7] = b"DOCTYPE";

/// Where the lexer is inside a tag candidate. The discriminant is the row of `LEX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Seen `</`; the next char must start a name.
    EndSlash,
    /// Inside the name.
    Name,
    /// Seen the name and `/`; only `>` may follow.
    NameSlash,
    /// Between attributes (whitespace or skipped characters).
    Between,
    /// Inside an attribute name.
    AttrName,
    /// After an attribute name and whitespace.
    AfterName,
    /// After `=` (and whitespace): a quote here opens a quoted value.
    AfterEq,
    /// Inside an unquoted value.
    Unquoted,
    /// Inside a `"`-quoted value.
    QuotedD,
    /// Inside a `'`-quoted value.
    QuotedS,
}

/// Every phase, indexed by its discriminant.
const PHASES: [Phase; 10] = [
    Phase::EndSlash,
    Phase::Name,
    Phase::NameSlash,
    Phase::Between,
    Phase::AttrName,
    Phase::AfterName,
    Phase::AfterEq,
    Phase::Unquoted,
    Phase::QuotedD,
    Phase::QuotedS,
];

impl Phase {
    /// The `BYTE_CLASS` bits of the bytes that cannot change this phase (0: every byte
    /// may).
    #[inline]
    fn run_mask(self) -> u8 {
        match self {
            Phase::Name | Phase::AttrName => CLASS_NAME,
            Phase::Unquoted => CLASS_UNQUOTED,
            Phase::QuotedD => CLASS_IN_DQ,
            Phase::QuotedS => CLASS_IN_SQ,
            _ => 0,
        }
    }

    const fn is_quoted(self) -> bool {
        matches!(self, Phase::QuotedD | Phase::QuotedS)
    }

    /// What the char `c` (whitespace if `ws`; for a non-ASCII char, its lead byte) does in
    /// this phase: the lexer's rule, written once. `LEX` tabulates it for ASCII bytes.
    // Bounds: `NAME_CHAR` has 256 entries, indexed by a byte.
    #[allow(clippy::indexing_slicing)]
    const fn step(self, c: u8, ws: bool) -> LexStep {
        match self {
            Phase::EndSlash => {
                if c.is_ascii_alphabetic() {
                    LexStep::To(Phase::Name)
                } else {
                    LexStep::Literal
                }
            }
            Phase::Name => {
                if c == b'>' {
                    LexStep::Complete
                } else if c == b'/' {
                    LexStep::To(Phase::NameSlash)
                } else if ws {
                    LexStep::To(Phase::Between)
                } else if !NAME_CHAR[c as usize] {
                    LexStep::Abort
                } else {
                    LexStep::To(Phase::Name)
                }
            }
            Phase::NameSlash => {
                if c == b'>' {
                    LexStep::Complete
                } else {
                    LexStep::Abort
                }
            }
            phase => {
                if c == b'>' {
                    return LexStep::Complete;
                }
                if c == b'<' && !phase.is_quoted() {
                    return LexStep::Abort;
                }
                let name = NAME_CHAR[c as usize];
                LexStep::To(match phase {
                    Phase::QuotedD if c == b'"' => Phase::Between,
                    Phase::QuotedS if c == b'\'' => Phase::Between,
                    Phase::Between if !ws && name => Phase::AttrName,
                    Phase::AttrName | Phase::AfterName if ws => Phase::AfterName,
                    Phase::AttrName | Phase::AfterName if c == b'=' => Phase::AfterEq,
                    Phase::AttrName | Phase::AfterName if name => Phase::AttrName,
                    Phase::AttrName | Phase::AfterName => Phase::Between,
                    Phase::AfterEq if ws => Phase::AfterEq,
                    Phase::AfterEq if c == b'"' => Phase::QuotedD,
                    Phase::AfterEq if c == b'\'' => Phase::QuotedS,
                    Phase::AfterEq => Phase::Unquoted,
                    Phase::Unquoted if ws => Phase::Between,
                    p => p,
                })
            }
        }
    }
}

/// One char's effect on a tag candidate (`Phase::step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LexStep {
    To(Phase),
    Complete,
    Abort,
    Literal,
}

/// `LEX` entry codes past the phases (`0..10`, the next phase).
const LEX_COMPLETE: u8 = 10;
const LEX_ABORT: u8 = 11;
const LEX_LITERAL: u8 = 12;
/// Not tabulated: a newline (the blank-line rule) or a non-ASCII lead byte.
const LEX_SLOW: u8 = 13;

/// The tag lexer as a table: `LEX[phase][byte]` is the next phase or an outcome code.
/// Built from `Phase::step` at compile time, so the rule has one source.
// Bounds: `p < 10` and `c < 256` are the loop conditions.
#[allow(clippy::indexing_slicing)]
static LEX: [[u8; 256]; 10] = {
    let mut t = [[0u8; 256]; 10];
    let mut p = 0;
    while p < 10 {
        let mut c = 0usize;
        while c < 256 {
            let b = c as u8;
            let code = if b == b'\n' || b >= 0x80 {
                LEX_SLOW
            } else {
                match PHASES[p].step(b, is_ws_byte(b)) {
                    LexStep::To(next) => next as u8,
                    LexStep::Complete => LEX_COMPLETE,
                    LexStep::Abort => LEX_ABORT,
                    LexStep::Literal => LEX_LITERAL,
                }
            };
            t[p][c] = code;
            c += 1;
        }
        p += 1;
    }
    t
};

/// The usual tag, lexed without `LEX`: a candidate from its name's start (`phase` `Name`, or
/// `EndSlash` before it) that completes at its first `>` within `bytes[..end]`, with only
/// ASCII other than `<` and newlines before it. Returns the end past that `>`, or `None`
/// (having decided nothing) for any other candidate, which `LEX` then lexes.
///
/// It decides what `LEX` would, in fewer steps: the table's loop takes a phase change as a
/// branch that goes the other way (about seven a tag, often mispredicted) and a load that
/// waits on the last. Within those bytes the phases cannot abort past the name (after the
/// name only an unquoted `<`, a blank line or a non-ASCII char's room can, and `>` completes
/// in every phase, quoted or not: `Phase::step`), so what remains to check is the name:
/// name chars, ended by `>`, by `/` right before the `>`, or by whitespace. The rest is
/// searched 8 bytes at a time (DESIGN.md, decision 103).
// Bounds: every index is below `end <= bytes.len()`: `k < end` (or `k + 1 < end`) is tested
// before it, or `k` is a flagged byte of the 8 read from `bytes[k..end]`.
#[allow(clippy::indexing_slicing)]
#[inline]
fn lex_usual(bytes: &[u8], start: usize, end: usize, phase: Phase) -> Option<usize> {
    let mut k = start;
    match phase {
        Phase::Name => {}
        // `</` and a letter: the name starts.
        Phase::EndSlash if k < end && bytes[k].is_ascii_alphabetic() => k += 1,
        _ => return None,
    }
    while k < end && NAME_CHAR[usize::from(bytes[k])] {
        k += 1;
    }
    if k >= end {
        return None;
    }
    match bytes[k] {
        b'>' => return Some(k + 1),
        b'/' => return (k + 1 < end && bytes[k + 1] == b'>').then_some(k + 2),
        c if c != b'\n' && is_ws_byte(c) => {}
        _ => return None,
    }
    // Past the name: the first `>`, `<`, newline or non-ASCII byte, which must be a `>`.
    use crate::text::WORD_HIGH as HIGH;
    const LO: u64 = 0x0101_0101_0101_0101;
    let zero = |x: u64| x.wrapping_sub(LO) & !x & HIGH;
    k += 1;
    while let Some(w) = bytes.get(k..end).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*w);
        // (The lowest flag of each zero test is exact, and so is the high bit.)
        let hit = zero(w ^ (LO * u64::from(b'>')))
            | zero(w ^ (LO * u64::from(b'<')))
            | zero(w ^ (LO * u64::from(b'\n')))
            | (w & HIGH);
        if hit != 0 {
            k += (hit.trailing_zeros() / 8) as usize;
            return (bytes[k] == b'>').then_some(k + 1);
        }
        k += 8;
    }
    while k < end {
        match bytes[k] {
            b'>' => return Some(k + 1),
            b'<' | b'\n' | 0x80.. => return None,
            _ => k += 1,
        }
    }
    None
}

/// The blank-line state of a tag candidate before `bytes[j]`, lexed from `start` with state
/// `at_start` there: whether a newline came last, followed only by spaces, tabs or `\r`
/// (another newline then makes a blank line, which aborts the candidate). Looked up
/// backwards when a newline needs it, so the lexer's loop does not track it per byte.
// Bounds: `start <= k <= j <= bytes.len()`, and `k > start` before each read.
#[allow(clippy::indexing_slicing)]
fn after_blanks(bytes: &[u8], start: usize, j: usize, at_start: bool) -> bool {
    let mut k = j;
    while k > start {
        match bytes[k - 1] {
            b' ' | b'\t' | b'\r' => k -= 1,
            b'\n' => return true,
            _ => return false,
        }
    }
    at_start
}

#[derive(Debug, Clone, Copy)]
struct TagLex {
    phase: Phase,
    /// After a newline and optional spaces, tabs or `\r`: another newline is a blank line.
    after_nl: bool,
}

impl TagLex {
    fn new(phase: Phase) -> Self {
        TagLex {
            phase,
            after_nl: false,
        }
    }
}

/// Which declarations `<!…` can still become.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BangMatch {
    k: u8,
    cdata: bool,
    comment: bool,
    doctype: bool,
}

/// A declaration being dropped (E6, drop mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decl {
    /// `<!--`, with how many `-` just before.
    Comment(u8),
    /// `<?`, whether the last char was `?`.
    Pi(bool),
    /// `<!DOCTYPE`.
    Doctype,
}

/// A line inside a fenced code block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FenceLine {
    /// The rest of the opening fence's line.
    Opener,
    /// Line start, this many spaces of indentation so far.
    Prefix(u8),
    /// A run of the fence char this long.
    Run(usize),
    /// After a long enough run: only spaces/tabs so far (`true`: the last was `\r`).
    Trail(bool),
    /// Ordinary content until the end of the line.
    Content,
}

/// Raw content (E3) of the open raw tag `tag`, `depth` deep in same-name nesting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RawCtx {
    tag: usize,
    depth: u32,
}

#[derive(Debug, Clone)]
enum State {
    Text,
    Lt,
    Bang(BangMatch),
    Cdata(u8),
    Decl(Decl),
    Tag(TagLex),
    Entity(EntityLexer),
    Backticks {
        n: usize,
        line_start: bool,
    },
    FenceInfo {
        n: usize,
    },
    CodeSpan {
        n: usize,
        closing: usize,
    },
    Tildes(usize),
    Fence {
        ch: u8,
        n: usize,
        line: FenceLine,
    },
    Raw(RawCtx),
    /// Seen `<` (and maybe `/`) in raw content; `cand` holds them and the name so far.
    RawName {
        raw: RawCtx,
        name_at: usize,
    },
    /// A candidate naming the raw tag, inside raw content.
    RawTag {
        raw: RawCtx,
        lex: TagLex,
    },
    Literal,
}

/// TagMatcher's leading-block mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leading {
    /// Not in leading-block mode.
    Off,
    /// Nothing seen yet: only a raw start tag at offset 0 is parsed.
    Start,
    /// Inside the leading block.
    InBlock,
}

/// Bytes to run through the machine again (the rest of a construct that did not complete).
#[derive(Debug)]
struct Replay {
    text: String,
    pos: usize,
    /// Source offset of `text[0]`.
    src: usize,
    /// The next `~` of `text[pos..]`, kept across the `run` calls that replay it.
    tilde: NextTilde,
}

enum TagOutcome {
    NeedMore,
    Complete,
    Abort,
    /// `</` not followed by a name start: literal `</`.
    Literal,
}

#[derive(Debug)]
pub(crate) struct Tokenizer {
    state: State,
    /// The unfinished construct from its first byte: a tag candidate, `<!…`, a code span.
    cand: String,
    /// Source offset of `cand[0]`.
    cand_src: usize,
    /// At a source line start: `Some(spaces so far)`, at most 3 (fences may open here).
    line_prefix: Option<u8>,
    leading: Leading,
    replays: Vec<Replay>,
    aborted: Option<Replay>,
    /// The buffer of the last finished replay, empty, for the next aborted construct: a
    /// flood of aborts (an unclosed quote before each `<`) allocates only as deep as
    /// replays nest, not once per abort.
    spare: String,
}

/// Finished replay buffers up to this capacity are kept for reuse (`Tokenizer::spare`).
const SPARE_MAX: usize = 1024;

/// The candidate buffer's first capacity, taken with the first candidate: room for the
/// usual tag (`<cite id="12" src='…'>`) at once, instead of growing 8, 16, 32 bytes at a
/// time in every parse (DESIGN.md, decision 49).
const CAND_FIRST: usize = 64;

/// Byte classes for the short path inside a tag candidate (`take_tag_chunk`'s first
/// tier): bytes that cannot change the lexer's phase.
const CLASS_NAME: u8 = 1;
/// In an unquoted value: printable ASCII other than `>` and `<`.
const CLASS_UNQUOTED: u8 = 2;
/// In a `"`-quoted value: printable ASCII other than `"` and `>`.
const CLASS_IN_DQ: u8 = 4;
/// In a `'`-quoted value: printable ASCII other than `'` and `>`.
const CLASS_IN_SQ: u8 = 8;

// Bounds: the loop runs `c` over 0..256, the table's length (evaluated at compile time).
#[allow(clippy::indexing_slicing)]
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        let mut v = 0;
        if NAME_CHAR[c] {
            v |= CLASS_NAME;
        }
        if b.is_ascii_graphic() && b != b'>' {
            if b != b'<' {
                v |= CLASS_UNQUOTED;
            }
            if b != b'"' {
                v |= CLASS_IN_DQ;
            }
            if b != b'\'' {
                v |= CLASS_IN_SQ;
            }
        }
        t[c] = v;
        c += 1;
    }
    t
};

/// The next `~` of a text at or after where it was last looked for, so that one search
/// serves every text run before it (decision 74). It belongs to the text (a fed chunk, a
/// replay), not to one [`Tokenizer::run`] call: a call returns at every construct that
/// leaves text to replay, and a search from there to the end each time would read the
/// rest of the chunk once per construct (`<a` and a blank line, repeated).
#[derive(Debug, Clone, Copy)]
struct NextTilde {
    /// Where the search started (`usize::MAX`: none yet).
    from: usize,
    /// The first `~` at or after `from`, if any.
    at: Option<usize>,
}

#[cfg(test)]
thread_local! {
    /// Bytes searched for a `~` on this thread (for a test that bounds them).
    static TILDE_SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl NextTilde {
    const UNSEARCHED: NextTilde = NextTilde {
        from: usize::MAX,
        at: None,
    };

    /// The first `~` of `bytes` at or after `from`.
    #[inline]
    fn find(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        if self.from > from || self.at.is_some_and(|a| a < from) {
            self.from = from;
            let rest = bytes.get(from..).unwrap_or_default();
            let at = memchr::memchr(b'~', rest);
            #[cfg(test)]
            TILDE_SCANNED.with(|v| v.set(v.get() + at.map_or(rest.len(), |k| k + 1)));
            self.at = at.map(|k| from + k);
        }
        self.at
    }

    /// The text lost its first `n` bytes (a `run` call took them).
    #[inline]
    fn advance(&mut self, n: usize) {
        match self.at {
            Some(a) if a < n => *self = NextTilde::UNSEARCHED,
            _ if self.from == usize::MAX => {}
            at => {
                // Searched from `from` with nothing before `at`: from the new start too
                // when `from` is behind it.
                self.from = self.from.saturating_sub(n);
                self.at = at.map(|a| a - n);
            }
        }
    }
}

impl Tokenizer {
    /// Between constructs in the text state with nothing to replay, and mid-line if fences
    /// are recognized (otherwise the line prefix is not tracked in text), inside a raw
    /// tag's content, or after a leading block (all text): a chunk of plain text
    /// (`text::PLAIN_CLASS`) would go to the builder unchanged, and leave the state as it
    /// is (the fast path of `StreamParser::update`).
    #[inline]
    pub(crate) fn passes_plain_text(&self, rules: &Rules) -> bool {
        let state = match self.state {
            State::Text => {
                self.leading != Leading::Start
                    && (self.line_prefix.is_none() || !rules.markdown_code)
            }
            // Raw content: text without a `<` goes to the builder as it is, and the line
            // prefix is not tracked (decision 93).
            State::Literal | State::Raw(_) => true,
            _ => false,
        };
        state && self.replays.is_empty() && self.aborted.is_none()
    }

    pub(crate) fn new(rules: &Rules) -> Self {
        Tokenizer {
            state: State::Text,
            cand: String::new(),
            cand_src: 0,
            line_prefix: Some(0),
            leading: if rules.leading_block_only {
                Leading::Start
            } else {
                Leading::Off
            },
            replays: Vec::new(),
            aborted: None,
            spare: String::new(),
        }
    }

    /// In text with nothing unfinished or to replay, not in a leading block, and, where
    /// fences are recognized, at a source line start: what a new tokenizer is, up to offsets
    /// (see `StreamParser::is_restartable`). The line prefix matters only to fences;
    /// `cand_src` only while a construct is unfinished; `spare` is a buffer.
    pub(crate) fn at_fresh_line(&self, rules: &Rules) -> bool {
        matches!(self.state, State::Text)
            && self.replays.is_empty()
            && self.aborted.is_none()
            && self.leading == Leading::Off
            && (self.line_prefix == Some(0) || !rules.markdown_code)
    }

    /// Bytes of an unfinished construct held at the end of the input so far.
    pub(crate) fn pending_len(&self) -> usize {
        match &self.state {
            State::Text | State::Raw(_) | State::Fence { .. } | State::Literal => 0,
            State::Cdata(n) => *n as usize,
            State::Entity(lx) => lx.taken().len(),
            State::Backticks { n, .. } | State::Tildes(n) => *n,
            _ => self.cand.len(),
        }
    }

    /// Opens a tag candidate at a `<` of source offset `src`, as `run` does on a `<` in text,
    /// if the machine is in text with nothing pending (no replays, no aborted construct, past
    /// a leading block's start). Returns `false`, changing nothing, otherwise. The caller
    /// knows the text before the `<` passes unchanged (`passes_plain_text`), so the line
    /// prefix it would have tracked over that text is cleared here as `run` clears it.
    #[inline]
    fn open_lt(&mut self, src: usize) -> bool {
        if !matches!(self.state, State::Text)
            || self.leading == Leading::Start
            || !self.replays.is_empty()
            || self.aborted.is_some()
        {
            return false;
        }
        self.line_prefix = None;
        self.start_cand("<", src);
        self.state = State::Lt;
        true
    }

    /// The fast path for a chunk that opens a tag candidate in text: a `<` of source offset
    /// `src`, then `rest`, which is nothing or the start of a name (or of `/` and a name) that
    /// [`take_tag_chunk`](Tokenizer::take_tag_chunk) takes whole (it neither completes nor
    /// aborts the candidate). What `run` does with them. Returns `false`, changing nothing,
    /// otherwise, or outside text (see [`open_lt`](Tokenizer::open_lt)).
    pub(crate) fn take_open_chunk(
        &mut self,
        rules: &Rules,
        src: usize,
        rest: &[u8],
        text: Option<&str>,
    ) -> bool {
        if rest
            .first()
            .is_some_and(|&c| !(c.is_ascii_alphabetic() || c == b'/'))
        {
            return false;
        }
        let prefix = self.line_prefix;
        if !self.open_lt(src) {
            return false;
        }
        if rest.is_empty() || self.take_tag_chunk(rules, rest, text) {
            return true;
        }
        // Back to text as it was (the candidate's buffer is not read there).
        self.state = State::Text;
        self.line_prefix = prefix;
        false
    }

    /// Whether a tag candidate is open (`<` seen, `>` not yet): where
    /// [`take_tag_chunk`](Tokenizer::take_tag_chunk) may apply.
    #[inline]
    pub(crate) fn in_tag(&self) -> bool {
        matches!(self.state, State::Lt | State::Tag(_))
    }

    /// The fast path for a chunk inside a tag candidate (a tag streamed a few bytes at a
    /// time): if the chunk neither completes nor aborts the candidate, the machine would only
    /// append it to `cand` and move the lexer's phase, so that is all this does, without the
    /// builder. Returns `false`, changing nothing, otherwise: outside a candidate, with
    /// replays pending, after `<` before a byte that does not start a name, on a `>` (most
    /// often a tag's last chunk, sent the full way at once), on an abort, or on invalid
    /// UTF-8. `text` is `chunk` as text if known.
    // Bounds: `BYTE_CLASS` has 256 entries, indexed by a byte.
    #[allow(clippy::indexing_slicing)]
    pub(crate) fn take_tag_chunk(
        &mut self,
        rules: &Rules,
        chunk: &[u8],
        text: Option<&str>,
    ) -> bool {
        if !self.replays.is_empty() || self.aborted.is_some() {
            return false;
        }
        let mut lx = match self.state {
            State::Tag(lx) => lx,
            // `<` then a letter: a start tag's name begins (with or without a leading block).
            State::Lt if chunk.first().is_some_and(u8::is_ascii_alphabetic) => {
                TagLex::new(Phase::Name)
            }
            State::Lt if chunk.first() == Some(&b'/') => {
                return self.take_end_slash(rules, chunk, text)
            }
            _ => return false,
        };
        let room = rules.max_tag_bytes.saturating_sub(self.cand.len());
        if let &[c] = chunk {
            return room > 0 && self.take_tag_byte(lx, c);
        }
        let mask = lx.phase.run_mask();
        if mask != 0
            && !chunk.is_empty()
            && chunk.len() <= room
            && chunk
                .iter()
                .all(|&c| BYTE_CLASS[usize::from(c)] & mask != 0)
        {
            // The cheapest case: bytes that cannot change the phase (part of a name or a
            // value), ASCII by their class, so no UTF-8 check.
            lx.after_nl = false;
            self.cand.extend(chunk.iter().map(|&c| char::from(c)));
            self.state = State::Tag(lx);
            return true;
        }
        // `>` completes the candidate; `<` aborts it outside a quoted value.
        let stop = if lx.phase.is_quoted() {
            find1(b'>', chunk)
        } else {
            find2(b'>', b'<', chunk)
        };
        if stop.is_some() {
            return false;
        }
        let Some(s) = text.or_else(|| as_text(chunk)) else {
            return false;
        };
        let mut i = 0;
        if !matches!(
            Self::lex_tag(rules, self.cand.len(), &mut lx, s, &mut i),
            TagOutcome::NeedMore
        ) {
            return false;
        }
        debug_assert_eq!(i, s.len(), "NeedMore consumes the whole chunk");
        self.cand.push_str(s);
        self.state = State::Tag(lx);
        true
    }

    /// [`take_tag_chunk`](Tokenizer::take_tag_chunk) after `<` for a chunk that starts with
    /// `/`: the slash joins the candidate as `run` takes it (an end tag's name may follow;
    /// outside a leading block's start, where only a start tag may come), then the rest is
    /// taken as inside the tag. Returns `false`, changing nothing, if the rest is not.
    fn take_end_slash(&mut self, rules: &Rules, chunk: &[u8], text: Option<&str>) -> bool {
        if self.leading == Leading::Start {
            return false;
        }
        self.cand.push('/');
        self.state = State::Tag(TagLex::new(Phase::EndSlash));
        let rest = chunk.get(1..).unwrap_or_default();
        if rest.is_empty() || self.take_tag_chunk(rules, rest, text.and_then(|s| s.get(1..))) {
            return true;
        }
        self.cand.pop();
        self.state = State::Lt;
        false
    }

    /// [`take_tag_chunk`](Tokenizer::take_tag_chunk) for one byte (a token stream cut into
    /// bytes), with room for it: what `lex_tag` does with a one-byte input. The table entry
    /// is the answer for ASCII but the newline; a newline is a blank line (abort) after a
    /// newline and blanks, and otherwise steps as whitespace; a lone non-ASCII byte is not
    /// text yet, and goes the full way.
    // Bounds: each `LEX` row has 256 entries, indexed by a byte; `LEX` has a row per phase
    // (`Phase` is `repr(u8)`, `0..10`), and a code below `LEX_COMPLETE` is a phase.
    #[allow(clippy::indexing_slicing)]
    fn take_tag_byte(&mut self, mut lx: TagLex, c: u8) -> bool {
        let code = LEX[usize::from(lx.phase as u8)][usize::from(c)];
        if code < LEX_COMPLETE {
            lx.phase = PHASES[usize::from(code)];
            // `after_blanks` over one byte that is not a newline.
            lx.after_nl &= matches!(c, b' ' | b'\t' | b'\r');
        } else if c == b'\n' && !lx.after_nl {
            let LexStep::To(next) = lx.phase.step(c, true) else {
                return false;
            };
            lx.phase = next;
            lx.after_nl = true;
        } else {
            return false;
        }
        // `c` is ASCII here (`LEX_SLOW` covers the bytes past it): the mask tells the
        // compiler, so the push skips UTF-8 encoding.
        self.cand.push(char::from(c & 0x7f));
        self.state = State::Tag(lx);
        true
    }

    /// Feeds a chunk whose first byte has source offset `src`.
    // Bounds: `run` returns a count <= rest.len() that ends on a char boundary.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn feed(&mut self, rules: &Rules, b: &mut Builder, input: &str, src: usize) {
        let mut rest = input;
        let mut src = src;
        // Kept across the `run` calls over this chunk (one returns at each construct that
        // leaves text to replay), so the chunk is searched for tildes once (decision 74).
        let mut tilde = NextTilde::UNSEARCHED;
        loop {
            if !self.replays.is_empty() {
                self.drain_replays(rules, b);
            }
            if rest.is_empty() {
                break;
            }
            let n = self.run(rules, b, rest, src, &mut tilde);
            tilde.advance(n);
            rest = &rest[n..];
            src += n;
            if let Some(r) = self.aborted.take() {
                self.replays.push(r);
            }
        }
    }

    // Bounds: `r.pos <= r.text.len()` and only moves to char boundaries (`run` returns a boundary).
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn drain_replays(&mut self, rules: &Rules, b: &mut Builder) {
        while let Some(mut r) = self.replays.pop() {
            let n = self.run(rules, b, &r.text[r.pos..], r.src + r.pos, &mut r.tilde);
            r.tilde.advance(n);
            r.pos += n;
            if r.pos < r.text.len() {
                self.replays.push(r);
            } else if r.text.capacity() <= SPARE_MAX {
                r.text.clear();
                self.spare = r.text;
            }
            if let Some(nr) = self.aborted.take() {
                self.replays.push(nr);
            }
        }
    }

    /// End of input: every unfinished construct becomes text (or is replayed as text).
    // Bounds: `n <= 2` for a pending `]` count.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn finish(&mut self, rules: &Rules, b: &mut Builder) {
        loop {
            self.drain_replays(rules, b);
            match std::mem::replace(&mut self.state, State::Text) {
                State::Text | State::Raw(_) | State::Fence { .. } | State::Literal => break,
                State::Lt | State::Bang(_) | State::RawName { .. } => b.text(&self.cand),
                State::Cdata(n) => b.text(&"]]"[..n as usize]),
                State::Entity(lx) => b.text(lx.taken()),
                State::Tag(_) | State::Decl(_) => self.abort_construct(b, 1, None),
                State::RawTag { raw, .. } => self.abort_construct(b, 1, Some(raw)),
                State::Backticks { n, .. } => b.text(&"`".repeat(n)),
                State::Tildes(n) => b.text(&"~".repeat(n)),
                // An opening fence line ending the input: a fence with no content.
                State::FenceInfo { .. } => b.text(&self.cand),
                State::CodeSpan { n, closing } => {
                    if closing == n {
                        b.text(&self.cand);
                    } else {
                        self.abort_construct(b, n, None);
                    }
                }
            }
            if let Some(r) = self.aborted.take() {
                self.replays.push(r);
            }
        }
    }

    /// The construct in `cand` did not complete: its first `lead` bytes are literal text and
    /// the rest is replayed (in raw content when `raw` is given).
    // Bounds: `lead` <= cand.len(): the construct's first byte or its opening backtick run, both
    // ASCII.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn abort_construct(&mut self, b: &mut Builder, lead: usize, raw: Option<RawCtx>) {
        self.line_prefix = None;
        self.state = match raw {
            Some(r) => State::Raw(r),
            None if self.leading == Leading::Start => {
                // Not a leading block: everything is text.
                self.leading = Leading::Off;
                b.text(&self.cand);
                self.state = State::Literal;
                return;
            }
            None => State::Text,
        };
        let rest = &self.cand[lead..];
        let r = rest.as_bytes();
        // A newline matters too: it starts a line where a fence may open. (SIMD searches past
        // a few bytes: a candidate may hold up to `max_tag_bytes`, and a flood of them aborts
        // each; a byte loop below, where a flood of `<a` leaves one byte each time.)
        let special = if raw.is_some() {
            find1(b'<', r).is_some()
        } else {
            find3(b'<', b'&', b'`', r).is_some() || find2(b'~', b'\n', r).is_some()
        };
        if !special {
            // Nothing in it can start a construct: it is all text.
            b.text(&self.cand);
            return;
        }
        b.text(&self.cand[..lead]);
        let mut text = std::mem::take(&mut self.spare);
        text.push_str(rest);
        self.aborted = Some(Replay {
            text,
            pos: 0,
            src: self.cand_src + lead,
            tilde: NextTilde::UNSEARCHED,
        });
    }

    /// A `<` at `input[i]` in text, outside a leading block, followed by a letter or `/`:
    /// the candidate that `Lt` and then `Tag` would build, lexed straight from `input`. A
    /// tag that completes there is taken as a slice of `input`, without being copied into
    /// `cand` or passing through those states (DESIGN.md, decision 51); otherwise `cand` and
    /// the state become what `Lt` and `Tag` leave after the same bytes. Returns where
    /// scanning goes on: `Ok` in this call, `Err` after an abort that left bytes to replay
    /// (`run` then returns, as from `Tag`).
    // Bounds: `i < j <= input.len()`; `j` stops after a `>` or at a char boundary
    // (`lex_tag` steps over whole chars), so `i..j` is a char range.
    #[allow(clippy::string_slice)]
    fn direct_tag(
        &mut self,
        rules: &Rules,
        b: &mut Builder,
        input: &str,
        i: usize,
        src: usize,
    ) -> Result<usize, usize> {
        // `Lt` takes a `/` into the candidate; a letter starts the name and is not consumed.
        let (used, phase) = if input.as_bytes().get(i + 1) == Some(&b'/') {
            (2, Phase::EndSlash)
        } else {
            (1, Phase::Name)
        };
        let mut lx = TagLex::new(phase);
        let mut j = i + used;
        let outcome = Self::lex_tag(rules, used, &mut lx, input, &mut j);
        let cand = &input[i..j];
        if let TagOutcome::Complete = outcome {
            let taken = self.take_tag(rules, b, cand, src + i);
            debug_assert!(taken, "only a leading block's start can refuse a tag");
            return Ok(j);
        }
        self.start_cand(cand, src + i);
        if self.after_lex(rules, b, outcome, lx) {
            return Err(j);
        }
        Ok(j)
    }

    /// What `Tag` does once `cand` holds the candidate's bytes lexed so far and `lex_tag`
    /// said `outcome`, leaving the lexer in `lx`. Returns `true` if the candidate aborted
    /// with bytes to replay (`run` then returns).
    fn after_lex(
        &mut self,
        rules: &Rules,
        b: &mut Builder,
        outcome: TagOutcome,
        lx: TagLex,
    ) -> bool {
        match outcome {
            TagOutcome::NeedMore => self.state = State::Tag(lx),
            TagOutcome::Literal => {
                b.text(&self.cand);
                self.state = State::Text;
            }
            TagOutcome::Complete => {
                self.state = State::Text;
                self.complete_tag(rules, b);
            }
            TagOutcome::Abort => {
                self.abort_construct(b, 1, None);
                return self.aborted.is_some();
            }
        }
        false
    }

    fn start_cand(&mut self, first: &str, src: usize) {
        self.cand.clear();
        if self.cand.capacity() == 0 {
            self.cand.reserve(CAND_FIRST);
        }
        self.cand.push_str(first);
        self.cand_src = src;
    }

    /// Runs the machine over `input` (source offset `src`). Returns how many bytes were
    /// consumed: all of them, unless a construct aborted (then `self.aborted` is set and the
    /// caller replays it before the rest).
    // Bounds: `i < bytes.len()` holds wherever `bytes[i]` is read (loop condition); `i` only
    // advances by whole chars or to memchr hits on ASCII bytes, so every slice of `input` ends on a
    // char boundary (fuzzed: fuzz/fuzz_targets/chunked.rs).
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn run(
        &mut self,
        rules: &Rules,
        b: &mut Builder,
        input: &str,
        src: usize,
        tilde: &mut NextTilde,
    ) -> usize {
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match &mut self.state {
                State::Text => {
                    if self.leading == Leading::Start && bytes[i] != b'<' {
                        self.leading = Leading::Off;
                        self.state = State::Literal;
                        continue;
                    }
                    if self.line_prefix.is_some() && bytes[i] == b'~' && rules.markdown_code {
                        self.state = State::Tildes(0);
                        continue;
                    }
                    let hit = rules.text_search.find(&bytes[i..]);
                    let end = hit.map_or(bytes.len(), |k| i + k);
                    if rules.markdown_code {
                        if let Some(t) = self.scan_line_starts(bytes, i, end, tilde) {
                            // A tilde at a line start inside the run: a possible fence.
                            b.text(&input[i..t]);
                            i = t;
                            self.state = State::Tildes(0);
                            continue;
                        }
                    }
                    if end > i {
                        b.text(&input[i..end]);
                    }
                    i = end;
                    if i == bytes.len() {
                        break;
                    }
                    let line_start = self.line_prefix.is_some();
                    self.line_prefix = None;
                    match bytes[i] {
                        b'<' if self.leading == Leading::Off
                            && bytes
                                .get(i + 1)
                                .is_some_and(|&c| c == b'/' || c.is_ascii_alphabetic()) =>
                        {
                            match self.direct_tag(rules, b, input, i, src) {
                                Ok(j) => i = j,
                                Err(j) => return j,
                            }
                        }
                        b'<' => {
                            self.start_cand("<", src + i);
                            self.state = State::Lt;
                            i += 1;
                        }
                        b'&' => {
                            self.state = State::Entity(EntityLexer::new());
                            i += 1;
                        }
                        _ => {
                            self.cand_src = src + i;
                            self.state = State::Backticks { n: 0, line_start };
                        }
                    }
                }
                State::Literal => {
                    b.text(&input[i..]);
                    return bytes.len();
                }
                State::Lt => {
                    let c = bytes[i];
                    if self.leading == Leading::Start && !c.is_ascii_alphabetic() {
                        // Only a start tag can begin the leading block.
                        self.abort_construct(b, 1, None);
                    } else if c == b'!' {
                        self.cand.push('!');
                        let drop = rules.declarations == Declarations::Drop;
                        self.state = State::Bang(BangMatch {
                            k: 0,
                            cdata: true,
                            comment: drop,
                            doctype: drop,
                        });
                        i += 1;
                    } else if c == b'?' && rules.declarations == Declarations::Drop {
                        self.cand.push('?');
                        self.state = State::Decl(Decl::Pi(false));
                        i += 1;
                    } else if c == b'/' {
                        self.cand.push('/');
                        self.state = State::Tag(TagLex::new(Phase::EndSlash));
                        i += 1;
                    } else if c.is_ascii_alphabetic() {
                        self.state = State::Tag(TagLex::new(Phase::Name));
                    } else {
                        b.text("<");
                        self.state = State::Text;
                    }
                }
                State::Bang(m) => {
                    let c = bytes[i];
                    let k = m.k as usize;
                    m.cdata &= CDATA_OPEN.get(k) == Some(&c);
                    m.comment &= k < 2 && c == b'-';
                    m.doctype &= DOCTYPE.get(k).is_some_and(|d| d.eq_ignore_ascii_case(&c));
                    if !(m.cdata || m.comment || m.doctype) {
                        b.text(&self.cand);
                        self.state = State::Text;
                        continue;
                    }
                    self.cand.push(c as char);
                    m.k += 1;
                    i += 1;
                    let k = m.k as usize;
                    if m.cdata && k == CDATA_OPEN.len() {
                        self.state = State::Cdata(0);
                    } else if m.comment && k == 2 {
                        self.state = State::Decl(Decl::Comment(0));
                    } else if m.doctype && k == DOCTYPE.len() {
                        self.state = State::Decl(Decl::Doctype);
                    }
                }
                State::Cdata(n) => {
                    let c = bytes[i];
                    if c == b']' {
                        if *n < 2 {
                            *n += 1;
                        } else {
                            b.text("]");
                        }
                        i += 1;
                    } else if c == b'>' && *n == 2 {
                        self.state = State::Text;
                        i += 1;
                    } else {
                        if *n > 0 {
                            b.text(&"]]"[..*n as usize]);
                            *n = 0;
                        }
                        let end = find1(b']', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                        b.text(&input[i..end]);
                        i = end;
                    }
                }
                State::Decl(d) => {
                    let start = i;
                    // The bytes this declaration may still take (`max_tag_bytes` counts it
                    // all, terminator included); every terminator ends in `>`.
                    let room = rules.max_tag_bytes.saturating_sub(self.cand.len());
                    let end = bytes.len().min(start.saturating_add(room));
                    let mut done = false;
                    while let Some(k) = find1(b'>', &bytes[i..end]) {
                        let h = i + k;
                        i = h + 1;
                        if decl_ends_at(*d, &bytes[start..h]) {
                            done = true;
                            break;
                        }
                    }
                    if !done {
                        i = end;
                    }
                    let over = !done && end < bytes.len();
                    let d = decl_after(*d, &bytes[start..i]);
                    if over {
                        // The limit may fall inside a character; no terminator can.
                        i = crate::text::floor_boundary(input, i);
                    }
                    self.cand.push_str(&input[start..i]);
                    if done {
                        // Dropped whole; it never closes anything.
                        self.state = State::Text;
                    } else if over {
                        self.abort_construct(b, 1, None);
                        if self.aborted.is_some() {
                            return i;
                        }
                    } else {
                        self.state = State::Decl(d);
                    }
                }
                State::Entity(lx) => match lx.push(bytes[i]) {
                    Step::More => i += 1,
                    Step::Done(c) => {
                        i += 1;
                        let mut buf = [0u8; 4];
                        b.text(c.encode_utf8(&mut buf));
                        self.state = State::Text;
                    }
                    Step::Fail => {
                        b.text(lx.taken());
                        self.state = State::Text;
                    }
                },
                State::Tag(lx) => {
                    let mut lx = *lx;
                    let start = i;
                    let outcome = Self::lex_tag(rules, self.cand.len(), &mut lx, input, &mut i);
                    self.cand.push_str(&input[start..i]);
                    if self.after_lex(rules, b, outcome, lx) {
                        return i;
                    }
                }
                State::Backticks { n, line_start } => {
                    let k = bytes[i..].iter().take_while(|&&c| c == b'`').count();
                    *n += k;
                    i += k;
                    if i < bytes.len() {
                        let (n, line_start) = (*n, *line_start);
                        self.cand.clear();
                        self.cand.push_str(&"`".repeat(n));
                        self.state = if line_start && n >= 3 {
                            State::FenceInfo { n }
                        } else {
                            State::CodeSpan { n, closing: 0 }
                        };
                    }
                }
                State::FenceInfo { n } => {
                    let n = *n;
                    let end = find2(b'\n', b'`', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                    if self.cand.len() + (end - i) > rules.max_tag_bytes {
                        // Too long to be an opening fence line: a code span, which fails too.
                        self.state = State::CodeSpan { n, closing: 0 };
                        self.abort_construct(b, n, None);
                        if self.aborted.is_some() {
                            return i;
                        }
                        continue;
                    }
                    self.cand.push_str(&input[i..end]);
                    i = end;
                    if i < bytes.len() {
                        if bytes[i] == b'\n' {
                            self.cand.push('\n');
                            b.text(&self.cand);
                            i += 1;
                            self.state = State::Fence {
                                ch: b'`',
                                n,
                                line: FenceLine::Prefix(0),
                            };
                        } else {
                            // A backtick in the info string: not a fence, a code span.
                            self.state = State::CodeSpan { n, closing: 0 };
                        }
                    }
                }
                State::CodeSpan { n, closing } => {
                    let (n, mut closing) = (*n, *closing);
                    let start = i;
                    let mut outcome = None;
                    while i < bytes.len() {
                        let c = bytes[i];
                        if c == b'`' {
                            closing += 1;
                            i += 1;
                            continue;
                        }
                        if closing == n {
                            outcome = Some(true);
                            break;
                        }
                        closing = 0;
                        if c == b'\n' {
                            outcome = Some(false);
                            break;
                        }
                        let next = find2(b'`', b'\n', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                        if self.cand.len() + (next - start) > rules.max_tag_bytes {
                            outcome = Some(false);
                            break;
                        }
                        i = next;
                    }
                    if self.cand.len() + (i - start) > rules.max_tag_bytes {
                        outcome = Some(false);
                    }
                    match outcome {
                        None => {
                            self.cand.push_str(&input[start..i]);
                            self.state = State::CodeSpan { n, closing };
                        }
                        Some(true) => {
                            self.cand.push_str(&input[start..i]);
                            b.text(&self.cand);
                            self.state = State::Text;
                        }
                        Some(false) => {
                            // No closing run on this line (or in time): the opening run is
                            // literal and what followed it is parsed as usual.
                            let keep = (i - start)
                                .min(rules.max_tag_bytes.saturating_sub(self.cand.len()));
                            let keep = crate::text::floor_boundary(&input[start..], keep);
                            self.cand.push_str(&input[start..start + keep]);
                            self.abort_construct(b, n, None);
                            return start + keep;
                        }
                    }
                }
                State::Tildes(n) => {
                    let k = bytes[i..].iter().take_while(|&&c| c == b'~').count();
                    *n += k;
                    i += k;
                    if i < bytes.len() {
                        let n = *n;
                        b.text(&"~".repeat(n));
                        self.line_prefix = None;
                        self.state = if n >= 3 {
                            State::Fence {
                                ch: b'~',
                                n,
                                line: FenceLine::Opener,
                            }
                        } else {
                            State::Text
                        };
                    }
                }
                State::Fence { ch, n, line } => {
                    let (ch, n) = (*ch, *n);
                    let mut line = *line;
                    let start = i;
                    let mut closed = false;
                    while i < bytes.len() {
                        if matches!(line, FenceLine::Opener | FenceLine::Content) {
                            match find1(b'\n', &bytes[i..]) {
                                Some(k) => {
                                    i += k + 1;
                                    line = FenceLine::Prefix(0);
                                    continue;
                                }
                                None => {
                                    i = bytes.len();
                                    break;
                                }
                            }
                        }
                        let c = bytes[i];
                        i += 1;
                        line = match line {
                            FenceLine::Prefix(s) if c == b' ' && s < 3 => FenceLine::Prefix(s + 1),
                            FenceLine::Prefix(_) if c == ch => FenceLine::Run(1),
                            FenceLine::Run(r) if c == ch => FenceLine::Run(r + 1),
                            FenceLine::Run(r) if r >= n && (c == b' ' || c == b'\t') => {
                                FenceLine::Trail(false)
                            }
                            FenceLine::Run(r) if r >= n && c == b'\r' => FenceLine::Trail(true),
                            FenceLine::Trail(false) if c == b' ' || c == b'\t' => {
                                FenceLine::Trail(false)
                            }
                            FenceLine::Trail(_) if c == b'\r' => FenceLine::Trail(true),
                            FenceLine::Run(r) if r >= n && c == b'\n' => {
                                closed = true;
                                break;
                            }
                            FenceLine::Trail(_) if c == b'\n' => {
                                closed = true;
                                break;
                            }
                            _ if c == b'\n' => FenceLine::Prefix(0),
                            _ => FenceLine::Content,
                        };
                    }
                    b.text(&input[start..i]);
                    if closed {
                        self.state = State::Text;
                        self.line_prefix = Some(0);
                    } else {
                        self.state = State::Fence { ch, n, line };
                    }
                }
                State::Raw(raw) => {
                    let raw = *raw;
                    match find1(b'<', &bytes[i..]) {
                        None => {
                            b.text(&input[i..]);
                            return bytes.len();
                        }
                        Some(k) => {
                            b.text(&input[i..i + k]);
                            i += k;
                            self.start_cand("<", src + i);
                            i += 1;
                            self.state = State::RawName { raw, name_at: 1 };
                        }
                    }
                }
                State::RawName { raw, name_at } => {
                    let (raw, name_at) = (*raw, *name_at);
                    let c = bytes[i];
                    if self.cand.len() == 1 && c == b'/' {
                        self.cand.push('/');
                        self.state = State::RawName { raw, name_at: 2 };
                        i += 1;
                        continue;
                    }
                    let name = &self.cand.as_bytes()[name_at..];
                    let own = |bytes: &[u8], exact: bool| -> bool {
                        rules.raw_names.iter().any(|(n, id)| {
                            *id == raw.tag
                                && n.len() >= bytes.len()
                                && (!exact || n.len() == bytes.len())
                                && n[..bytes.len()].iter().zip(bytes).all(|(a, b)| {
                                    if rules.case_sensitive {
                                        a == b
                                    } else {
                                        a.eq_ignore_ascii_case(b)
                                    }
                                })
                        })
                    };
                    if is_name_char(c) && (!name.is_empty() || c.is_ascii_alphabetic()) {
                        let mut next = name.to_vec();
                        next.push(c);
                        if own(&next, false) {
                            self.cand.push(c as char);
                            i += 1;
                            continue;
                        }
                    } else if !name.is_empty() && own(name, true) {
                        // The full name of this raw tag: lex the rest as a candidate.
                        self.state = State::RawTag {
                            raw,
                            lex: TagLex::new(Phase::Name),
                        };
                        continue;
                    }
                    // Any other `<` is literal inside raw content.
                    b.text(&self.cand);
                    self.state = State::Raw(raw);
                }
                State::RawTag { raw, lex } => {
                    let (raw, mut lex) = (*raw, *lex);
                    let start = i;
                    let outcome = Self::lex_tag(rules, self.cand.len(), &mut lex, input, &mut i);
                    self.cand.push_str(&input[start..i]);
                    match outcome {
                        TagOutcome::NeedMore => self.state = State::RawTag { raw, lex },
                        TagOutcome::Complete => self.complete_raw_tag(rules, b, raw),
                        TagOutcome::Abort | TagOutcome::Literal => {
                            self.abort_construct(b, 1, Some(raw));
                            if self.aborted.is_some() {
                                return i;
                            }
                        }
                    }
                }
            }
        }
        bytes.len()
    }

    /// In a plain run `bytes[from..to]`: tracks whether the run ends at a line start, and
    /// returns the position of a `~` that starts a line (after at most 3 spaces), if any.
    /// Tildes are rare in prose and newlines are not, so this looks for tildes (`tilde`
    /// remembers the next one of the input across runs) and checks only the few bytes
    /// before one and at the run's end (decision 74).
    // Bounds: `from <= to <= bytes.len()`; `j > from` guards `bytes[j - 1]`, and `trailing <
    // run.len()` guards `run[run.len() - 1 - trailing]`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn scan_line_starts(
        &mut self,
        bytes: &[u8],
        from: usize,
        to: usize,
        tilde: &mut NextTilde,
    ) -> Option<usize> {
        let run = &bytes[from..to];
        if run.is_empty() {
            return None;
        }
        let mut k = from;
        while let Some(t) = tilde.find(bytes, k).filter(|&t| t < to) {
            // Back over at most 4 spaces: a line start within 3 makes `t` a fence's start.
            let mut j = t;
            while j > from && t - j < 4 && bytes[j - 1] == b' ' {
                j -= 1;
            }
            let spaces = t - j;
            let starts_line = if j > from {
                bytes[j - 1] == b'\n' && spaces <= 3
            } else {
                self.line_prefix
                    .is_some_and(|p| usize::from(p) + spaces <= 3)
            };
            if starts_line {
                return Some(t);
            }
            k = t + 1;
        }
        // The line prefix at the end: at most 3 spaces after the run's last newline, or a
        // run of spaces only, continuing the prefix it started in.
        let mut trailing = 0;
        while trailing < 4 && trailing < run.len() && run[run.len() - 1 - trailing] == b' ' {
            trailing += 1;
        }
        self.line_prefix = if trailing == run.len() {
            self.line_prefix
                .map(|p| usize::from(p) + trailing)
                .filter(|&n| n <= 3)
                .map(|n| n as u8)
        } else if trailing <= 3 && run[run.len() - 1 - trailing] == b'\n' {
            Some(trailing as u8)
        } else {
            None
        };
        None
    }

    /// Lexes a tag candidate from `input[*i..]`, advancing `*i` past what belongs to it:
    /// past the `>` that completes it, to the char that aborts it (or that makes `</` a
    /// literal), or to the end of the input if it needs more. ASCII bytes other than a
    /// newline take one `LEX` load each; a newline (the blank-line rule) or a non-ASCII char
    /// (decoded for its width and whitespace) takes `Phase::step` directly. `lx` is updated
    /// only when the candidate needs more input (otherwise it is done with).
    // Bounds: `j < end <= bytes.len()` is the loop condition; `p < 10` (a `LEX` code below
    // `LEX_COMPLETE`, or a `Phase` discriminant).
    #[allow(clippy::indexing_slicing)]
    fn lex_tag(
        rules: &Rules,
        used: usize,
        lx: &mut TagLex,
        input: &str,
        i: &mut usize,
    ) -> TagOutcome {
        let bytes = input.as_bytes();
        let start = *i;
        // The bytes this candidate may still take (`max_tag_bytes` counts it all, `used` of
        // them already taken), and the end of the input they reach.
        let room = rules.max_tag_bytes.saturating_sub(used);
        let end = bytes.len().min(start.saturating_add(room));
        if let Some(e) = lex_usual(bytes, start, end, lx.phase) {
            *i = e;
            return TagOutcome::Complete;
        }
        let mut p = lx.phase as u8;
        let mut j = start;
        let outcome = 'lex: {
            while j < end {
                let c = bytes[j];
                let code = LEX[usize::from(p)][usize::from(c)];
                if code == p {
                    j += 1;
                    continue;
                }
                if code < LEX_COMPLETE {
                    p = code;
                    j += 1;
                    continue;
                }
                let (w, step) = match code {
                    LEX_COMPLETE => (1, LexStep::Complete),
                    LEX_ABORT => (1, LexStep::Abort),
                    LEX_LITERAL => (1, LexStep::Literal),
                    _ => {
                        let (w, ws) = if c < 0x80 {
                            (1, is_ws_byte(c))
                        } else {
                            let ch = decode_at(input, j);
                            (ch.len_utf8(), ch.is_whitespace())
                        };
                        if j - start + w > room {
                            break 'lex TagOutcome::Abort;
                        }
                        if c == b'\n' && after_blanks(bytes, start, j, lx.after_nl) {
                            break 'lex TagOutcome::Abort;
                        }
                        (w, PHASES[usize::from(p)].step(c, ws))
                    }
                };
                match step {
                    LexStep::To(next) => {
                        p = next as u8;
                        j += w;
                    }
                    LexStep::Complete => {
                        j += w;
                        break 'lex TagOutcome::Complete;
                    }
                    LexStep::Abort => break 'lex TagOutcome::Abort,
                    LexStep::Literal => break 'lex TagOutcome::Literal,
                }
            }
            // The next char would pass `max_tag_bytes`.
            if j < bytes.len() {
                TagOutcome::Abort
            } else {
                TagOutcome::NeedMore
            }
        };
        // The state only matters to a candidate that goes on.
        if matches!(outcome, TagOutcome::NeedMore) {
            lx.after_nl = after_blanks(bytes, start, j, lx.after_nl);
            lx.phase = PHASES[usize::from(p)];
        }
        *i = j;
        outcome
    }

    /// The tag lexer as it was before `LEX`: a run fast path and a per-char match, kept as
    /// the oracle `lex_tag` is checked against.
    #[cfg(test)]
    // Bounds: `*i < bytes.len()` is the loop condition.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn lex_tag_reference(
        &self,
        rules: &Rules,
        lx: &mut TagLex,
        input: &str,
        i: &mut usize,
    ) -> TagOutcome {
        let bytes = input.as_bytes();
        let start = *i;
        // The bytes this candidate may still take (`max_tag_bytes` counts it all), and the
        // end of the input they reach.
        let room = rules.max_tag_bytes.saturating_sub(self.cand.len());
        let end = bytes.len().min(start.saturating_add(room));
        while *i < bytes.len() {
            // Fast path: a run of bytes that cannot change the phase (all ASCII, none of them
            // whitespace, so the blank-line state just resets).
            let mask = lx.phase.run_mask();
            if mask != 0 && *i < end {
                let run = bytes[*i..end]
                    .iter()
                    .position(|&c| BYTE_CLASS[usize::from(c)] & mask == 0)
                    .unwrap_or(end - *i);
                if run > 0 {
                    lx.after_nl = false;
                    *i += run;
                    continue;
                }
            }
            let c = bytes[*i];
            let (w, ws) = if c < 0x80 {
                (1, is_ws_byte(c))
            } else {
                let ch = decode_at(input, *i);
                (ch.len_utf8(), ch.is_whitespace())
            };
            if *i - start + w > room {
                return TagOutcome::Abort;
            }
            if c == b'\n' {
                if lx.after_nl {
                    return TagOutcome::Abort;
                }
                lx.after_nl = true;
            } else if !matches!(c, b' ' | b'\t' | b'\r') {
                lx.after_nl = false;
            }
            match lx.phase {
                Phase::EndSlash => {
                    if c.is_ascii_alphabetic() {
                        lx.phase = Phase::Name;
                    } else {
                        return TagOutcome::Literal;
                    }
                }
                Phase::Name => {
                    if c == b'>' {
                        *i += 1;
                        return TagOutcome::Complete;
                    } else if c == b'/' {
                        lx.phase = Phase::NameSlash;
                    } else if ws {
                        lx.phase = Phase::Between;
                    } else if !is_name_char(c) {
                        return TagOutcome::Abort;
                    }
                }
                Phase::NameSlash => {
                    if c == b'>' {
                        *i += 1;
                        return TagOutcome::Complete;
                    }
                    return TagOutcome::Abort;
                }
                phase => {
                    if c == b'>' {
                        *i += 1;
                        return TagOutcome::Complete;
                    }
                    if c == b'<' && !phase.is_quoted() {
                        return TagOutcome::Abort;
                    }
                    lx.phase = match phase {
                        Phase::QuotedD if c == b'"' => Phase::Between,
                        Phase::QuotedS if c == b'\'' => Phase::Between,
                        Phase::Between if !ws && is_name_char(c) => Phase::AttrName,
                        Phase::AttrName if ws => Phase::AfterName,
                        Phase::AttrName | Phase::AfterName if c == b'=' => Phase::AfterEq,
                        Phase::AttrName if is_name_char(c) => Phase::AttrName,
                        Phase::AttrName => Phase::Between,
                        Phase::AfterName if ws => Phase::AfterName,
                        Phase::AfterName if is_name_char(c) => Phase::AttrName,
                        Phase::AfterName => Phase::Between,
                        Phase::AfterEq if ws => Phase::AfterEq,
                        Phase::AfterEq if c == b'"' => Phase::QuotedD,
                        Phase::AfterEq if c == b'\'' => Phase::QuotedS,
                        Phase::AfterEq => Phase::Unquoted,
                        Phase::Unquoted if ws => Phase::Between,
                        p => p,
                    };
                }
            }
            *i += w;
        }
        TagOutcome::NeedMore
    }

    /// Splits the complete candidate `cand`: whether it is an end tag, where its name starts
    /// and ends.
    // Bounds: `ne < bytes.len()` guards every read.
    #[allow(clippy::indexing_slicing)]
    fn split_tag(cand: &str) -> (bool, usize, usize) {
        let bytes = cand.as_bytes();
        let is_end = bytes.get(1) == Some(&b'/');
        let ns = if is_end { 2 } else { 1 };
        let mut ne = ns;
        while ne < bytes.len() && is_name_char(bytes[ne]) {
            ne += 1;
        }
        (is_end, ns, ne)
    }

    /// The text of the complete candidate `cand` between the name and `>`, trailing
    /// whitespace removed.
    // Bounds: only called on a complete candidate, `<` … `>`, with `name_end < len`.
    #[allow(clippy::string_slice)]
    fn tag_rest(cand: &str, name_end: usize) -> &str {
        trim_end(&cand[name_end..cand.len() - 1])
    }

    /// A complete candidate `<…>` is in `cand`: classify it and tell the builder.
    fn complete_tag(&mut self, rules: &Rules, b: &mut Builder) {
        let cand = std::mem::take(&mut self.cand);
        let taken = self.take_tag(rules, b, &cand, self.cand_src);
        self.cand = cand;
        if !taken {
            self.abort_construct(b, self.cand.len(), None);
        }
    }

    /// The complete candidate `cand` (source offset `src`): classifies it and tells the
    /// builder. Returns `false`, having done nothing, if a leading block's start is expected
    /// and this is not one (the caller aborts the candidate).
    // Bounds: `ns..ne` and `ne..len-1` come from `split_tag` on a complete candidate (which starts
    // with `<` and ends with `>`).
    #[allow(clippy::string_slice)]
    fn take_tag(&mut self, rules: &Rules, b: &mut Builder, cand: &str, src: usize) -> bool {
        let (is_end, ns, ne) = Self::split_tag(cand);
        let tag = rules.lookup(&cand[ns..ne]);
        if self.leading == Leading::Start {
            match tag {
                Some(t)
                    if !is_end
                        && rules.tags.get(t).is_some_and(|r| r.raw)
                        && !Self::tag_rest(cand, ne).ends_with('/') =>
                {
                    self.leading = Leading::InBlock;
                }
                _ => return false,
            }
        }
        match tag {
            Some(tag) if is_end => {
                if !b.end_tag(tag, src) && rules.stray == StrayEndTagPolicy::Passthrough {
                    b.text(cand);
                }
            }
            Some(tag) => {
                let t = Self::tag_rest(cand, ne);
                match t.strip_suffix('/') {
                    Some(attrs) => {
                        let attrs = parse_attrs(
                            trim_end(attrs),
                            rules.decode_entities,
                            rules.duplicate_attrs,
                        );
                        if !b.self_closing_tag(tag, attrs, src) {
                            Self::too_deep(rules, b, cand);
                        }
                    }
                    None => {
                        let attrs = parse_attrs(t, rules.decode_entities, rules.duplicate_attrs);
                        if !b.start_tag(tag, attrs, src) {
                            Self::too_deep(rules, b, cand);
                        } else if rules.tags.get(tag).is_some_and(|r| r.raw) {
                            self.state = State::Raw(RawCtx { tag, depth: 1 });
                        }
                    }
                }
            }
            None => match rules.unknown_mode {
                UnknownMode::Strip => {}
                UnknownMode::Passthrough | UnknownMode::TreatAsText => b.text(cand),
            },
        }
        true
    }

    /// A start tag past `max_depth`: handled as an unrecognized tag.
    fn too_deep(rules: &Rules, b: &mut Builder, cand: &str) {
        match rules.unknown_mode {
            UnknownMode::Strip => {}
            UnknownMode::Passthrough | UnknownMode::TreatAsText => b.text(cand),
        }
    }

    /// A complete candidate naming the open raw tag, inside its content.
    fn complete_raw_tag(&mut self, rules: &Rules, b: &mut Builder, raw: RawCtx) {
        let (is_end, _, ne) = Self::split_tag(&self.cand);
        let self_closing = !is_end && Self::tag_rest(&self.cand, ne).ends_with('/');
        let depth = match (is_end, self_closing) {
            (false, false) => raw.depth + 1,
            (true, _) => raw.depth - 1,
            (false, true) => raw.depth,
        };
        if depth > 0 {
            // Nested same-name markup is part of the raw content.
            b.text(&self.cand);
            self.state = State::Raw(RawCtx { depth, ..raw });
            return;
        }
        self.state = if self.leading == Leading::InBlock {
            self.leading = Leading::Off;
            State::Literal
        } else {
            State::Text
        };
        if !b.end_tag(raw.tag, self.cand_src) && rules.stray == StrayEndTagPolicy::Passthrough {
            b.text(&self.cand);
        }
    }
}

/// `s.trim_end()`, inline when `s` ends in an ASCII byte that is not whitespace (a tag's
/// usual last attribute or name), where `trim_end` is a call that decodes the last char.
#[inline(always)]
fn trim_end(s: &str) -> &str {
    match s.as_bytes().last() {
        Some(&c) if c < 0x80 && !is_ws_byte(c) => s,
        None => s,
        _ => s.trim_end(),
    }
}

/// Whether a `>` right after `before` (the declaration's bytes since the state `d` was
/// recorded) ends the declaration: `?>` for a processing instruction, `-->` for a comment,
/// any `>` for a DOCTYPE. The opener's own `?` or dashes never count (`<?>`, `<!-->`).
fn decl_ends_at(d: Decl, before: &[u8]) -> bool {
    match decl_after(d, before) {
        Decl::Doctype => true,
        Decl::Pi(q) => q,
        Decl::Comment(n) => n == 2,
    }
}

/// The state after the declaration's bytes `taken` (no terminator among them).
fn decl_after(d: Decl, taken: &[u8]) -> Decl {
    match d {
        Decl::Doctype => Decl::Doctype,
        Decl::Pi(q) => Decl::Pi(taken.last().map_or(q, |&c| c == b'?')),
        Decl::Comment(n) => Decl::Comment(trailing_dashes(n, taken)),
    }
}

/// The dashes (at most 2) ending the bytes `n` dashes were counted before, then `b`.
fn trailing_dashes(n: u8, b: &[u8]) -> u8 {
    match b {
        [.., b'-', b'-'] => 2,
        [b'-'] => (n + 1).min(2),
        [.., b'-'] => 1,
        [] => n,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    /// `lex_tag` with the room the candidate in `tok` leaves, as the machine calls it.
    fn lex_tag_of(
        tok: &Tokenizer,
        rules: &Rules,
        lx: &mut TagLex,
        input: &str,
        i: &mut usize,
    ) -> TagOutcome {
        Tokenizer::lex_tag(rules, tok.cand.len(), lx, input, i)
    }

    /// One lexer call from a given state: its outcome, where it stopped, and the state after.
    fn lex_once(
        lexer: fn(&Tokenizer, &Rules, &mut TagLex, &str, &mut usize) -> TagOutcome,
        tok: &Tokenizer,
        rules: &Rules,
        lx: TagLex,
        input: &str,
    ) -> (u8, usize, Phase, bool) {
        let mut lx = lx;
        let mut i = 0;
        let outcome = match lexer(tok, rules, &mut lx, input, &mut i) {
            TagOutcome::NeedMore => 0,
            TagOutcome::Complete => 1,
            TagOutcome::Abort => 2,
            TagOutcome::Literal => 3,
        };
        // The state only matters when the candidate goes on.
        if outcome == 0 {
            (outcome, i, lx.phase, lx.after_nl)
        } else {
            (outcome, i, Phase::Name, false)
        }
    }

    /// A seeded xorshift64* generator, for the random strings of the lexer tests.
    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// Refills `s` with a random string of fewer than `max_len` pieces: one draw of `next`
    /// for the length, then one per piece, which `pick` maps to the piece.
    fn random_string(
        s: &mut String,
        next: &mut impl FnMut() -> u64,
        max_len: u64,
        pick: impl Fn(u64) -> &'static str,
    ) {
        s.clear();
        for _ in 0..next() % max_len {
            s.push_str(pick(next()));
        }
    }

    /// `lex_tag` (the `LEX` table, the blank-line state looked up backwards) against the
    /// per-char lexer it replaced: every start state, every string of up to 3 chars from an
    /// alphabet with a member of every byte class (names, whitespace of each kind, `=`,
    /// quotes, `<`, `>`, `/`, non-ASCII letters and spaces of 2 to 4 bytes), then seeded
    /// random strings of up to 24 chars, each under several `max_tag_bytes` rooms; the
    /// outcome, the stop position and the state after must agree, and the state after
    /// must carry on alike when the input is cut in two.
    #[test]
    fn table_lexer_matches_the_per_char_lexer() {
        const ALPHABET: [&str; 24] = [
            "a", "Z", "7", "-", ".", "_", ":", " ", "\t", "\r", "\n", "\u{b}", "=", "\"", "'", ">",
            "<", "/", "!", "&", "é", "\u{a0}", "\u{3000}", "😀",
        ];
        let rooms = [1, 2, 3, 5, 8, 1 << 13];
        let rules: Vec<Rules> = rooms
            .iter()
            .map(|&n| Rules::new(&Config::default().with_max_tag_bytes(n).unwrap()))
            .collect();
        let tok = Tokenizer::new(&rules[0]);
        let check = |input: &str, checked: &mut usize| {
            for rules in &rules {
                for phase in PHASES {
                    for after_nl in [false, true] {
                        let lx = TagLex { phase, after_nl };
                        let want = lex_once(Tokenizer::lex_tag_reference, &tok, rules, lx, input);
                        let got = lex_once(lex_tag_of, &tok, rules, lx, input);
                        assert_eq!(
                            got, want,
                            "{input:?} from {lx:?}, max_tag_bytes {}",
                            rules.max_tag_bytes
                        );
                        *checked += 1;
                    }
                }
            }
        };
        let mut checked = 0;
        let n = ALPHABET.len();
        let mut s = String::new();
        for len in 0..=3u32 {
            for k in 0..n.pow(len) {
                s.clear();
                let mut k = k;
                for _ in 0..len {
                    s.push_str(ALPHABET[k % n]);
                    k /= n;
                }
                check(&s, &mut checked);
            }
        }
        // Longer strings, seeded: blank lines and long runs appear at length > 3.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..4000 {
            // Half the picks from the whitespace and newline members, so blank lines come up.
            random_string(&mut s, &mut next, 25, |r| {
                let pick = if r % 2 == 0 {
                    7 + (r >> 8) % 5
                } else {
                    (r >> 8) % n as u64
                };
                ALPHABET[usize::try_from(pick).unwrap()]
            });
            check(&s, &mut checked);
            // Cut in two at each char boundary: the second call resumes from the first's state.
            for cut in (1..s.len()).filter(|&c| s.is_char_boundary(c)) {
                let (head, tail) = s.split_at(cut);
                let rules = &rules[rules.len() - 1];
                for phase in PHASES {
                    let lx = TagLex {
                        phase,
                        after_nl: false,
                    };
                    let whole = lex_once(lex_tag_of, &tok, rules, lx, &s);
                    let first = lex_once(lex_tag_of, &tok, rules, lx, head);
                    if first.0 != 0 {
                        assert_eq!((first.0, first.1), (whole.0, whole.1), "{s:?} cut at {cut}");
                        continue;
                    }
                    let mid = TagLex {
                        phase: first.2,
                        after_nl: first.3,
                    };
                    let second = lex_once(lex_tag_of, &tok, rules, mid, tail);
                    assert_eq!(
                        (second.0, cut + second.1, second.2, second.3),
                        whole,
                        "{s:?} cut at {cut}"
                    );
                }
            }
        }
        assert!(checked > 1_000_000, "{checked}");
    }

    /// The short path for the usual tag (`lex_usual`, decision 103) against the per-char
    /// lexer, on tag-like strings long enough for its 8-byte steps: names and attributes
    /// with a `>` anywhere, or none, and now and then what it must leave to the table (an
    /// unquoted or quoted `<`, a newline, a non-ASCII char, a `/` not before the `>`, a
    /// name char it does not take), under rooms that end inside and past its 8-byte steps.
    #[test]
    fn usual_tags_lex_as_the_per_char_lexer() {
        const COMMON: [&str; 12] = ["c", "i", "t", "e", "1", " ", "=", "\"", "'", ">", "-", "x"];
        const RARE: [&str; 9] = ["<", "\n", "/", "é", "\t", "!", "\u{a0}", "&", "\r"];
        let rooms = [4, 9, 12, 16, 17, 23, 31, 1 << 13];
        let rules: Vec<Rules> = rooms
            .iter()
            .map(|&n| Rules::new(&Config::default().with_max_tag_bytes(n).unwrap()))
            .collect();
        let tok = Tokenizer::new(&rules[0]);
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let (mut checked, mut usual) = (0, 0);
        let mut s = String::new();
        for _ in 0..20_000 {
            random_string(&mut s, &mut next, 41, |r| {
                if r % 16 == 0 {
                    RARE[usize::try_from((r >> 8) % RARE.len() as u64).unwrap()]
                } else {
                    COMMON[usize::try_from((r >> 8) % COMMON.len() as u64).unwrap()]
                }
            });
            for rules in &rules {
                for (phase, after_nl) in [
                    (Phase::Name, false),
                    (Phase::Name, true),
                    (Phase::EndSlash, false),
                ] {
                    let lx = TagLex { phase, after_nl };
                    let want = lex_once(Tokenizer::lex_tag_reference, &tok, rules, lx, &s);
                    let got = lex_once(lex_tag_of, &tok, rules, lx, &s);
                    assert_eq!(
                        got, want,
                        "{s:?} from {lx:?}, max_tag_bytes {}",
                        rules.max_tag_bytes
                    );
                    checked += 1;
                    let end = s.len().min(rules.max_tag_bytes);
                    usual += usize::from(lex_usual(s.as_bytes(), 0, end, phase).is_some());
                }
            }
        }
        // The short path decided a good share of them, past its 8-byte steps too.
        assert!(usual > checked / 10, "{usual} of {checked}");
    }

    /// The one-byte tag short path (`take_tag_byte`) against `lex_tag` on that byte: for
    /// every phase, blank-line state and byte, it takes the byte exactly when the lexer
    /// says the candidate needs more, and leaves the state the lexer leaves.
    #[test]
    fn tag_byte_path_matches_the_lexer() {
        let rules = Rules::new(&Config::default());
        let mut taken = 0;
        for phase in PHASES {
            for after_nl in [false, true] {
                let lx = TagLex { phase, after_nl };
                for c in 0..=255u8 {
                    let mut tok = Tokenizer::new(&rules);
                    tok.cand.push('<');
                    tok.state = State::Tag(lx);
                    let got = tok.take_tag_byte(lx, c);
                    // A lone byte past ASCII is not text: the lexer never sees it alone.
                    let want = std::str::from_utf8(&[c])
                        .ok()
                        .map(|s| lex_once(lex_tag_of, &tok, &rules, lx, s))
                        .filter(|&(outcome, ..)| outcome == 0);
                    assert_eq!(got, want.is_some(), "{lx:?} {c}");
                    let State::Tag(after) = tok.state else {
                        panic!("state left Tag: {lx:?} {c}");
                    };
                    match want {
                        Some((_, i, phase, after_nl)) => {
                            assert_eq!(i, 1);
                            assert_eq!((after.phase, after.after_nl), (phase, after_nl));
                            assert_eq!(tok.cand.as_bytes(), [b'<', c], "{lx:?} {c}");
                            taken += 1;
                        }
                        None => {
                            assert_eq!((after.phase, after.after_nl), (lx.phase, lx.after_nl));
                            assert_eq!(tok.cand, "<", "{lx:?} {c}");
                        }
                    }
                }
            }
        }
        // Most ASCII bytes go on in most phases; the outcomes are the exceptions.
        assert!(taken > 1000, "{taken}");
    }

    /// `scan_line_starts` (tilde-driven, decision 74) against the newline-driven scan it
    /// replaced, kept here as the reference: every string of up to 7 bytes of space,
    /// newline, tilde and a letter, every run `from..to` inside it, every line prefix state
    /// at the run's start, and where the next tilde was last looked for (nowhere yet, at
    /// the run's start, at an earlier run's start, past the run's start); the tilde found
    /// and the prefix after must agree.
    #[test]
    fn tilde_scan_matches_the_newline_scan() {
        fn reference(
            prefix0: Option<u8>,
            bytes: &[u8],
            from: usize,
            to: usize,
        ) -> (Option<usize>, Option<u8>) {
            let run = &bytes[from..to];
            if prefix0.is_none() && !run.contains(&b'\n') {
                return (None, prefix0);
            }
            let check = |at: usize, spaces: u8| -> (Option<usize>, Option<u8>) {
                let mut s = spaces;
                let mut j = at;
                while j < to {
                    match bytes[j] {
                        b' ' if s < 3 => s += 1,
                        b'~' => return (Some(j), None),
                        _ => return (None, None),
                    }
                    j += 1;
                }
                (None, Some(s))
            };
            let mut prefix = match prefix0 {
                Some(s) => {
                    let (t, p) = check(from, s);
                    if t.is_some() {
                        return (t, prefix0);
                    }
                    p
                }
                None => None,
            };
            for (nl, _) in run.iter().enumerate().filter(|(_, &c)| c == b'\n') {
                let (t, p) = check(from + nl + 1, 0);
                if t.is_some() {
                    return (t, prefix0);
                }
                prefix = p;
            }
            if run.is_empty() {
                prefix = prefix0;
            }
            (None, prefix)
        }
        let rules = Rules::new(&Config::default());
        let alphabet = [b' ', b'\n', b'~', b'a'];
        let mut inputs: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=7 {
            let mut next = Vec::new();
            for s in inputs.iter().filter(|s| s.len() == len - 1) {
                for &c in &alphabet {
                    let mut t = s.clone();
                    t.push(c);
                    next.push(t);
                }
            }
            inputs.extend(next);
        }
        let mut checked = 0;
        for bytes in &inputs {
            for from in 0..=bytes.len() {
                for to in from..=bytes.len() {
                    for prefix0 in [None, Some(0), Some(1), Some(2), Some(3)] {
                        for searched in [None, Some(from), Some(0), Some(to)] {
                            let mut tok = Tokenizer::new(&rules);
                            tok.line_prefix = prefix0;
                            let mut tilde = NextTilde::UNSEARCHED;
                            if let Some(at) = searched {
                                tilde.find(bytes, at);
                            }
                            let got = tok.scan_line_starts(bytes, from, to, &mut tilde);
                            let want = reference(prefix0, bytes, from, to);
                            assert_eq!(
                                (got, tok.line_prefix),
                                want,
                                "{:?} {from}..{to} prefix {prefix0:?}",
                                String::from_utf8_lossy(bytes)
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 14_612_100);
    }

    /// The tildes of a chunk are searched for once, however often `run` returns in it to
    /// replay an aborted construct: `<a` and a blank line, repeated, aborts a candidate every
    /// 4 bytes and leaves text to replay, and a search from each return to the end read the
    /// rest of the chunk each time (512 M bytes for 64 KiB; decision 74). Replays keep
    /// their own search. Tildes at the end make every search run to the end of the chunk.
    #[test]
    fn a_chunk_is_searched_for_tildes_once() {
        use crate::builder::Builder;
        use std::sync::Arc;
        let rules = Arc::new(Rules::new(&Config::default()));
        for unit in ["<a\n\n", "<a\n\n~", "x <a b='\n\n"] {
            let mut input = unit.repeat(16_384);
            input.push_str("\n~~~\n");
            TILDE_SCANNED.with(|v| v.set(0));
            let mut tok = Tokenizer::new(&rules);
            let mut b = Builder::new(rules.clone());
            tok.feed(&rules, &mut b, &input, 0);
            tok.finish(&rules, &mut b);
            let scanned = TILDE_SCANNED.with(|v| v.get());
            assert!(
                scanned <= 2 * input.len(),
                "{unit:?}: {scanned} bytes searched for {}",
                input.len()
            );
        }
    }

    /// The short paths that open a tag candidate (`take_open_chunk`, on `<` and a rest) and
    /// go on inside one (`take_tag_chunk`, on the rest) against the full machine: from states
    /// reached by feeding a prefix (text, line starts, code, entities, candidates after `<`
    /// and in a name or value, a leading block before, inside and after), for every rest of
    /// up to 3 chars from an alphabet of name, end-tag, markup, space and non-ASCII bytes,
    /// each either refuses and changes nothing or leaves the state `feed` leaves.
    #[test]
    fn open_path_matches_the_machine() {
        use crate::builder::Builder;
        use std::sync::Arc;
        let configs = [
            Config::default(),
            Config::kindaxml_compat(),
            Config::default()
                .with_tags(["think"])
                .unwrap()
                .with_leading_block_only(true),
            // TagMatcher's leading mode: a raw tag.
            Config::default()
                .with_tags(["think"])
                .unwrap()
                .with_raw_tags(["think"])
                .unwrap()
                .with_leading_block_only(true),
        ];
        let prefixes = [
            "",
            "text ",
            "line\n",
            "line\n  ",
            "x",
            "<",
            "<a",
            "&am",
            "`",
            "``",
            "~~~\n",
            "<think>",
            "<think>x</think>",
            "<!--",
            "a <b c='",
            "<a\n",
        ];
        let alphabet = ["a", "Z", "/", ">", "<", " ", "\n", "!", "=", "\"", "é"];
        let mut rests = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = rests
                .iter()
                .filter(|r| r.chars().count() == rests.last().map_or(0, |l| l.chars().count()))
                .flat_map(|r| alphabet.iter().map(move |c| format!("{r}{c}")))
                .collect();
            rests.extend(longer);
        }
        let view = |t: &Tokenizer| {
            format!(
                "{:?} {:?} {:?} {} {:?}",
                t.state,
                t.line_prefix,
                t.leading,
                t.replays.len(),
                t.aborted.is_some()
            )
        };
        let (mut taken, mut refused, mut tag_taken) = (0, 0, 0);
        for (n, config) in configs.iter().enumerate() {
            let rules = Arc::new(Rules::new(config));
            let at = |prefix: &str| {
                let mut tok = Tokenizer::new(&rules);
                let mut b = Builder::new(rules.clone());
                tok.feed(&rules, &mut b, prefix, 0);
                (tok, b)
            };
            for prefix in prefixes {
                for rest in &rests {
                    // Inside a candidate: the tag path on the rest alone.
                    let (mut fast, _) = at(prefix);
                    let before = view(&fast);
                    let what = format!("{prefix:?} + {rest:?} (config {n})");
                    if fast.take_tag_chunk(&rules, rest.as_bytes(), None) {
                        let (mut full, mut b) = at(prefix);
                        full.feed(&rules, &mut b, rest, prefix.len());
                        assert_eq!(view(&fast), view(&full), "{what}");
                        assert_eq!(fast.cand, full.cand, "{what}");
                        tag_taken += 1;
                    } else {
                        assert_eq!(view(&fast), before, "refused but changed: {what}");
                    }
                    // Opening a candidate with `<` and the rest.
                    let (mut fast, _) = at(prefix);
                    let before = view(&fast);
                    let what = format!("{prefix:?} + <{rest:?} (config {n})");
                    if !fast.take_open_chunk(&rules, prefix.len(), rest.as_bytes(), None) {
                        assert_eq!(view(&fast), before, "refused but changed: {what}");
                        refused += 1;
                        continue;
                    }
                    let (mut full, mut b) = at(prefix);
                    full.feed(&rules, &mut b, &format!("<{rest}"), prefix.len());
                    assert_eq!(view(&fast), view(&full), "{what}");
                    assert_eq!(
                        (&fast.cand, fast.cand_src),
                        (&full.cand, full.cand_src),
                        "{what}"
                    );
                    taken += 1;
                }
            }
        }
        assert!(
            taken > 1000 && refused > 10000 && tag_taken > 1000,
            "{taken} {refused} {tag_taken}"
        );
    }

    /// The tag short path's first tier (`take_tag_chunk`) appends bytes of a phase's run
    /// class without lexing them: each must be one the lexer keeps that phase on.
    #[test]
    fn run_classes_keep_the_phase_in_the_table() {
        for phase in PHASES {
            let mask = phase.run_mask();
            for c in 0..=255u8 {
                if BYTE_CLASS[usize::from(c)] & mask != 0 {
                    assert_eq!(
                        LEX[phase as usize][usize::from(c)],
                        phase as u8,
                        "{phase:?} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_classes_match_their_definitions() {
        for c in 0..=255u8 {
            let class = BYTE_CLASS[usize::from(c)];
            let graphic = c.is_ascii_graphic();
            assert_eq!(class & CLASS_NAME != 0, is_name_char(c), "{c}");
            assert_eq!(
                class & CLASS_UNQUOTED != 0,
                graphic && c != b'>' && c != b'<',
                "{c}"
            );
            assert_eq!(
                class & CLASS_IN_DQ != 0,
                graphic && c != b'"' && c != b'>',
                "{c}"
            );
            assert_eq!(
                class & CLASS_IN_SQ != 0,
                graphic && c != b'\'' && c != b'>',
                "{c}"
            );
        }
    }
}

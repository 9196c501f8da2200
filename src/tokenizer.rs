//! The lexical half of the machine (SPEC §2, E1): finds tags, CDATA and character references
//! in the input and hands text and markup to the [`Builder`].
//!
//! The tokenizer is fed `&str` chunks that hold whole characters (the UTF-8 layer keeps a
//! split character back). Everything it has seen of an unfinished construct is explicit
//! state: the bytes of a tag candidate (bounded by `max_tag_bytes`), the characters of a
//! reference (at most 32 bytes), how much of `<![CDATA[` or `]]>` matched. Nothing is
//! rescanned on the next chunk.
//!
//! ```text
//!  state        input               next state / action
//!  ----------   -----------------   ---------------------------------------------------
//!  Text         plain run           text (memchr jumps to the next `<` or `&`)
//!  Text         `<`                 Lt
//!  Text         `&` (decoding on)   Entity
//!  Lt           `!`                 Bang(0)
//!  Lt           `/`                 Tag(EndSlash)
//!  Lt           [A-Za-z]            Tag(Name), char not consumed
//!  Lt           other               text "<", Text, char not consumed
//!  Bang(k)      "[CDATA["[k]        Bang(k+1), or Cdata(0) when complete
//!  Bang(k)      other               text "<!…", Text, char not consumed
//!  Cdata(n)     `]`                 Cdata(min(n+1,2)) (a third `]` is content)
//!  Cdata(2)     `>`                 Text (the delimiters produce no text)
//!  Cdata(n)     other               text of n `]` + the char, Cdata(0)
//!  Entity       part of a ref       Entity; `;` completing it: decoded char, Text
//!  Entity       other               text of what was taken, Text, char not consumed
//!  Tag(_)       `>` outside Name    complete tag: Builder, Text
//!  Tag(_)       name/attr/quote     Tag(_) (lexer phases below)
//!  Tag(_)       abort               text "<", replay the candidate after `<`, Text
//! ```
//!
//! A candidate aborts (SPEC §2) when its name is not followed by whitespace, `>` or `/>`,
//! on an unquoted `<`, on a blank line, past `max_tag_bytes`, or at the end of input. Its
//! `<` is then literal and scanning resumes right after it: the candidate's bytes are
//! *replayed* through the machine from an explicit stack, not by recursion. Each byte is
//! replayed a bounded number of times (only a quoted `<` can start a candidate inside
//! another one).

use crate::attrs::parse_attrs;
use crate::builder::Builder;
use crate::config::{is_name_char, Rules, UnknownMode};
use crate::entity::{EntityLexer, Step};
use crate::text::decode_at;

const CDATA_OPEN: &[u8; 7] = b"[CDATA[";

/// Where the lexer is inside a tag candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    /// Inside a quoted value closed by this byte.
    Quoted(u8),
}

#[derive(Debug, Clone, Copy)]
struct TagLex {
    phase: Phase,
    /// After a newline and optional spaces, tabs or `\r`: another newline is a blank line.
    after_nl: bool,
}

#[derive(Debug, Clone)]
enum State {
    Text,
    Lt,
    Bang(u8),
    Cdata(u8),
    Tag(TagLex),
    Entity(EntityLexer),
}

/// Bytes to run through the machine again (a failed candidate after its `<`).
#[derive(Debug)]
struct Replay {
    text: String,
    pos: usize,
    /// Source offset of `text[0]`.
    src: usize,
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
    /// The unfinished construct: tag candidate text from its `<`, or `<!…`.
    cand: String,
    /// Source offset of `cand[0]`.
    cand_src: usize,
    replays: Vec<Replay>,
    aborted: Option<Replay>,
}

impl Tokenizer {
    pub(crate) fn new() -> Self {
        Tokenizer {
            state: State::Text,
            cand: String::new(),
            cand_src: 0,
            replays: Vec::new(),
            aborted: None,
        }
    }

    /// Bytes of an unfinished construct held at the end of the input so far.
    pub(crate) fn pending_len(&self) -> usize {
        match &self.state {
            State::Text => 0,
            State::Cdata(n) => *n as usize,
            State::Entity(lx) => lx.taken().len(),
            _ => self.cand.len(),
        }
    }

    /// Feeds a chunk whose first byte has source offset `src`.
    pub(crate) fn feed(&mut self, rules: &Rules, b: &mut Builder, input: &str, src: usize) {
        let mut rest = input;
        let mut src = src;
        loop {
            self.drain_replays(rules, b);
            if rest.is_empty() {
                break;
            }
            let n = self.run(rules, b, rest, src);
            rest = &rest[n..];
            src += n;
            if let Some(r) = self.aborted.take() {
                self.replays.push(r);
            }
        }
    }

    fn drain_replays(&mut self, rules: &Rules, b: &mut Builder) {
        while let Some(mut r) = self.replays.pop() {
            let n = self.run(rules, b, &r.text[r.pos..], r.src + r.pos);
            r.pos += n;
            if r.pos < r.text.len() {
                self.replays.push(r);
            }
            if let Some(nr) = self.aborted.take() {
                self.replays.push(nr);
            }
        }
    }

    /// End of input: every unfinished construct becomes text (or is replayed as text).
    pub(crate) fn finish(&mut self, rules: &Rules, b: &mut Builder) {
        loop {
            self.drain_replays(rules, b);
            match std::mem::replace(&mut self.state, State::Text) {
                State::Text => break,
                State::Lt | State::Bang(_) => b.text(&self.cand),
                State::Cdata(n) => b.text(&"]]"[..n as usize]),
                State::Entity(lx) => b.text(lx.taken()),
                State::Tag(_) => self.abort_candidate(b),
            }
            if let Some(r) = self.aborted.take() {
                self.replays.push(r);
            }
        }
    }

    /// The candidate in `cand` is not a tag: its `<` is text and what follows is replayed.
    fn abort_candidate(&mut self, b: &mut Builder) {
        self.state = State::Text;
        let rest = &self.cand[1..];
        if !rest.bytes().any(|c| c == b'<' || c == b'&') {
            // Nothing in it can start a construct: it is all text.
            b.text(&self.cand);
            return;
        }
        b.text("<");
        self.aborted = Some(Replay {
            text: rest.to_string(),
            pos: 0,
            src: self.cand_src + 1,
        });
    }

    /// Runs the machine over `input` (source offset `src`). Returns how many bytes were
    /// consumed: all of them, unless a candidate aborted (then `self.aborted` is set and the
    /// caller replays it before the rest).
    fn run(&mut self, rules: &Rules, b: &mut Builder, input: &str, src: usize) -> usize {
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match &mut self.state {
                State::Text => {
                    let hit = if rules.decode_entities {
                        memchr::memchr2(b'<', b'&', &bytes[i..])
                    } else {
                        memchr::memchr(b'<', &bytes[i..])
                    };
                    let Some(k) = hit else {
                        b.text(&input[i..]);
                        return bytes.len();
                    };
                    if k > 0 {
                        b.text(&input[i..i + k]);
                    }
                    i += k;
                    if bytes[i] == b'<' {
                        self.cand.clear();
                        self.cand.push('<');
                        self.cand_src = src + i;
                        self.state = State::Lt;
                    } else {
                        self.state = State::Entity(EntityLexer::new());
                    }
                    i += 1;
                }
                State::Lt => {
                    let c = bytes[i];
                    if c == b'!' {
                        self.cand.push('!');
                        self.state = State::Bang(0);
                        i += 1;
                    } else if c == b'/' {
                        self.cand.push('/');
                        self.state = State::Tag(TagLex {
                            phase: Phase::EndSlash,
                            after_nl: false,
                        });
                        i += 1;
                    } else if c.is_ascii_alphabetic() {
                        self.state = State::Tag(TagLex {
                            phase: Phase::Name,
                            after_nl: false,
                        });
                    } else {
                        b.text("<");
                        self.state = State::Text;
                    }
                }
                State::Bang(k) => {
                    let c = bytes[i];
                    if c == CDATA_OPEN[*k as usize] {
                        self.cand.push(c as char);
                        *k += 1;
                        i += 1;
                        if *k as usize == CDATA_OPEN.len() {
                            self.state = State::Cdata(0);
                        }
                    } else {
                        b.text(&self.cand);
                        self.state = State::Text;
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
                        let end = memchr::memchr(b']', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                        b.text(&input[i..end]);
                        i = end;
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
                    let outcome = self.lex_tag(rules, &mut lx, input, &mut i);
                    self.cand.push_str(&input[start..i]);
                    match outcome {
                        TagOutcome::NeedMore => {
                            self.state = State::Tag(lx);
                        }
                        TagOutcome::Literal => {
                            b.text(&self.cand);
                            self.state = State::Text;
                        }
                        TagOutcome::Complete => {
                            self.state = State::Text;
                            self.complete_tag(rules, b);
                        }
                        TagOutcome::Abort => {
                            self.abort_candidate(b);
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

    /// Lexes a tag candidate from `input[*i..]`, advancing `*i` past what belongs to it.
    fn lex_tag(&self, rules: &Rules, lx: &mut TagLex, input: &str, i: &mut usize) -> TagOutcome {
        let bytes = input.as_bytes();
        let base = self.cand.len();
        let start = *i;
        while *i < bytes.len() {
            let c = bytes[*i];
            let (w, ws) = if c < 0x80 {
                (1, (c as char).is_ascii_whitespace() || c == 0x0b)
            } else {
                let ch = decode_at(input, *i);
                (ch.len_utf8(), ch.is_whitespace())
            };
            if base + (*i - start) + w > rules.max_tag_bytes {
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
                    if c == b'<' && !matches!(phase, Phase::Quoted(_)) {
                        return TagOutcome::Abort;
                    }
                    lx.phase = match phase {
                        Phase::Quoted(q) if c == q => Phase::Between,
                        Phase::Quoted(q) => Phase::Quoted(q),
                        Phase::Between if !ws && is_name_char(c) => Phase::AttrName,
                        Phase::AttrName if ws => Phase::AfterName,
                        Phase::AttrName | Phase::AfterName if c == b'=' => Phase::AfterEq,
                        Phase::AttrName if is_name_char(c) => Phase::AttrName,
                        Phase::AttrName => Phase::Between,
                        Phase::AfterName if ws => Phase::AfterName,
                        Phase::AfterName if is_name_char(c) => Phase::AttrName,
                        Phase::AfterName => Phase::Between,
                        Phase::AfterEq if ws => Phase::AfterEq,
                        Phase::AfterEq if c == b'"' || c == b'\'' => Phase::Quoted(c),
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

    /// A complete candidate `<…>` is in `cand`: classify it and tell the builder.
    fn complete_tag(&mut self, rules: &Rules, b: &mut Builder) {
        let full = self.cand.as_str();
        let bytes = full.as_bytes();
        let is_end = bytes.get(1) == Some(&b'/');
        let ns = if is_end { 2 } else { 1 };
        let mut ne = ns;
        while ne < bytes.len() && is_name_char(bytes[ne]) {
            ne += 1;
        }
        let name = &full[ns..ne];
        let inner = &full[ne..full.len() - 1];
        let src = self.cand_src;
        match rules.lookup(name) {
            Some(tag) if is_end => {
                if !b.end_tag(tag, src)
                    && rules.stray == crate::config::StrayEndTagPolicy::Passthrough
                {
                    b.text(full);
                }
            }
            Some(tag) => {
                let t = inner.trim_end();
                match t.strip_suffix('/') {
                    Some(attrs) => {
                        let attrs = parse_attrs(
                            attrs.trim_end(),
                            rules.decode_entities,
                            rules.duplicate_attrs,
                        );
                        b.self_closing_tag(tag, attrs, src);
                    }
                    None => {
                        let attrs = parse_attrs(t, rules.decode_entities, rules.duplicate_attrs);
                        b.start_tag(tag, attrs, src);
                    }
                }
            }
            None => match rules.unknown_mode {
                UnknownMode::Strip => {}
                UnknownMode::Passthrough | UnknownMode::TreatAsText => b.text(full),
            },
        }
    }
}

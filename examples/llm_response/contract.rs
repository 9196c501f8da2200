//! The `<llmResponse>` contract (seed 001, SPEC §8 E4): a streaming reader that turns an
//! LLM's tagged answer into typed structs and validates it fail-fast.
//!
//! ```text
//! <llmResponse>
//!   <response>natural language answer</response>
//!   <analysis>
//!     <subject name=".." description=".." isNew="true|false">   0–3 of them
//!       <keyword term=".." confidence="0.0-1.0" />               0–10 per subject
//!     </subject>
//!     <summaryUpdate>incremental summary</summaryUpdate>        exactly one, may be empty
//!   </analysis>
//! </llmResponse>
//! ```
//!
//! # Approach
//!
//! 1. **Parse** with [`kindaxml_stream`] in nested mode (E4, `autoclose_on_any_tag = false`):
//!    the six contract elements are recognized tags and form a stack. Unknown elements are
//!    stripped (the contract's "parsers should ignore unknown elements"), comments and other
//!    declarations dropped (LLMs echo the prompt template's `<!-- … -->` lines, which mention
//!    `<keyword>`), entities decoded (so `&amp;` is `&`, and a bare `&` or `&&` stays literal
//!    instead of failing the parse as in seed 003). Markdown code spans and fences (E2) and
//!    CDATA keep any markup inside them as text (`Vec<u8>`). Empty elements (`<keyword …/>`, a `<keyword …>`
//!    whose closer is missing, a `<subject>` holding only keywords) become markers, so no
//!    element is lost. Trimming is off: the reader trims text itself, and with trimming on
//!    the root's leading newline would hold every byte back until `</llmResponse>` (a
//!    recovered span would be trimmed, an explicitly closed one not), so nothing could stream.
//! 2. **Collect** while the tokens arrive ([`ResponseReader::update`]): every element shows
//!    up as an [`Annotation`] (on text segments, outermost first, or on a marker) and is
//!    identified by its source offset. The reader keeps one record per element — its
//!    annotation, the output position where its content starts, and, for `<response>` and
//!    `<summaryUpdate>`, its text. Text of `<response>` is also handed back as soon as it
//!    is final, so a UI can show the answer while the analysis is still being generated.
//! 3. **Rebuild the tree** at [`finish`](ResponseReader::finish), when every annotation
//!    knows how its tag closed. An element extends from its start tag to the markup that
//!    closed it ([`Close::EndTag`], [`Close::AutoClosed`]) or to the end of the input
//!    ([`Close::EndOfInput`]); nesting follows from source offsets. One contract-aware rule
//!    is added for elements whose end tag is missing (closed by recovery): such an element
//!    ends before the first element the schema does not allow inside it, as HTML implies
//!    end tags. Three `<keyword …>` without closers would otherwise nest in each other;
//!    with the rule they are siblings, and a `<response>` missing its `</response>` ends
//!    where `<analysis>` begins.
//! 4. **Validate** the tree against the seed's "Response Validation" rules and return the
//!    first violation as a typed [`ResponseError`] naming the element, the attribute and
//!    the source byte offset. Rule 1 ("well-formed XML") is replaced by KindaXML's
//!    deterministic recovery: an element closed by recovery is accepted and reported as a
//!    [`Recovery`] note in the result, so the caller can log what was repaired. (Repairs
//!    the parser does inside a tag — an unclosed quote ending at `>` — leave no trace in its
//!    output and so get no note; a quote that swallows the next attribute shows up as that
//!    attribute missing.)
//!
//! The order of checks is fixed: the root and the text outside it; then, element by element
//! in document order, the element's attributes, the elements allowed inside it and their
//! counts, then its children's content. Text directly inside the containers (`<llmResponse>`,
//! `<analysis>`, `<subject>`) and inside `<keyword>` is ignored: the schema gives them none,
//! and in practice it is the indentation.
//!
//! Chunk invariance carries over: however the input is split, the result is the same.

use std::collections::btree_map::{BTreeMap, Entry};
use std::fmt;

use kindaxml_stream::{
    Annotation, AttrValue, Close, Config, Declarations, EmptyElements, Event, Segment, Strategy,
    StreamParser, UnknownMode,
};

/// The elements of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Element {
    /// `<llmResponse>`, the root.
    LlmResponse,
    /// `<response>`: the natural-language answer.
    Response,
    /// `<analysis>`: subjects and the summary update.
    Analysis,
    /// `<subject name description isNew>`.
    Subject,
    /// `<keyword term confidence/>`.
    Keyword,
    /// `<summaryUpdate>`.
    SummaryUpdate,
}

impl Element {
    /// Every element, as recognized by the parser.
    pub const ALL: [Element; 6] = [
        Element::LlmResponse,
        Element::Response,
        Element::Analysis,
        Element::Subject,
        Element::Keyword,
        Element::SummaryUpdate,
    ];

    /// The tag name.
    pub fn name(self) -> &'static str {
        match self {
            Element::LlmResponse => "llmResponse",
            Element::Response => "response",
            Element::Analysis => "analysis",
            Element::Subject => "subject",
            Element::Keyword => "keyword",
            Element::SummaryUpdate => "summaryUpdate",
        }
    }

    fn from_tag(tag: &str) -> Option<Element> {
        Element::ALL.into_iter().find(|e| e.name() == tag)
    }

    /// Whether the schema allows `child` directly inside `self`.
    pub fn allows(self, child: Element) -> bool {
        matches!(
            (self, child),
            (Element::LlmResponse, Element::Response | Element::Analysis)
                | (Element::Analysis, Element::Subject | Element::SummaryUpdate)
                | (Element::Subject, Element::Keyword)
        )
    }

    /// Whether the element's text is part of the result.
    fn keeps_text(self) -> bool {
        matches!(self, Element::Response | Element::SummaryUpdate)
    }
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated `<llmResponse>`.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmResponse {
    /// The text of `<response>`, entities decoded, unknown markup removed, trimmed.
    pub response: String,
    /// The `<subject>` elements of `<analysis>`, in document order (0–3).
    pub subjects: Vec<Subject>,
    /// The text of `<summaryUpdate>`, trimmed (may be empty).
    pub summary_update: String,
}

/// A `<subject>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: String,
    /// `isNew`: `"true"` or `"false"`.
    pub is_new: bool,
    /// Its `<keyword>` elements, in document order (0–10).
    pub keywords: Vec<Keyword>,
}

/// A `<keyword>`.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyword {
    /// `term`.
    pub term: String,
    /// `confidence`, within `0.0..=1.0`.
    pub confidence: f64,
}

/// A successful read: the typed value and what recovery repaired on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Validated {
    /// The typed response.
    pub value: LlmResponse,
    /// Elements whose end tag was missing, in document order.
    pub recoveries: Vec<Recovery>,
}

/// An element accepted although its end tag was missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    /// The element.
    pub element: Element,
    /// Source byte offset of its start tag.
    pub offset: usize,
    /// Where the reader took it to end.
    pub closed: ClosedBy,
}

/// Where an element without an end tag was taken to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClosedBy {
    /// Before an element the schema does not allow inside it (the reader's rule).
    Before {
        /// The element that started there.
        element: Element,
        /// Its source byte offset.
        offset: usize,
    },
    /// At the end tag of an enclosing element (`</subject>` after `<keyword …>`).
    OuterEndTag {
        /// The enclosing element.
        element: Element,
        /// Source byte offset of its end tag.
        offset: usize,
    },
    /// At the end of the input (a truncated stream).
    EndOfInput,
    /// At the parser's `max_span_bytes` limit.
    SpanLimit,
    /// Any other recovery the parser reported.
    Other(Close),
}

impl fmt::Display for Recovery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<{}> at byte {}: no end tag; ",
            self.element, self.offset
        )?;
        match self.closed {
            ClosedBy::Before { element, offset } => {
                write!(f, "closed before <{element}> at byte {offset}")
            }
            ClosedBy::OuterEndTag { element, offset } => {
                write!(f, "closed by </{element}> at byte {offset}")
            }
            ClosedBy::EndOfInput => f.write_str("closed at the end of the input"),
            ClosedBy::SpanLimit => f.write_str("closed at the parser's span limit"),
            ClosedBy::Other(close) => write!(f, "closed by recovery ({close:?})"),
        }
    }
}

/// What is wrong with an attribute value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrProblem {
    /// `isNew` is neither `true` nor `false`.
    NotABoolean,
    /// `confidence` does not parse as a float.
    NotANumber,
    /// `confidence` is outside `0.0..=1.0`.
    OutOfRange,
}

impl fmt::Display for AttrProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttrProblem::NotABoolean => "is not `true` or `false`",
            AttrProblem::NotANumber => "is not a number",
            AttrProblem::OutOfRange => "is outside 0.0..=1.0",
        })
    }
}

/// The first violation of the contract's validation rules. Offsets are source byte offsets
/// of the element's start tag (`<`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResponseError {
    /// Rule 2: there is no `<llmResponse>` (nor any other contract element).
    #[error("no <llmResponse> element in the input")]
    MissingRoot,
    /// Rule 2: a top-level element other than a single `<llmResponse>`.
    #[error(
        "<{element}> at byte {offset}: not allowed at the top level (the root must be one <llmResponse>)"
    )]
    UnexpectedTopLevel {
        /// The element.
        element: Element,
        /// Its offset.
        offset: usize,
    },
    /// Rule 2: non-whitespace text before or after `<llmResponse>` (a preamble such as
    /// "Sure! Here is…"). `text` is its start, at most 60 characters.
    #[error("text outside <llmResponse>: {text:?}")]
    TextOutsideRoot {
        /// The text, trimmed and shortened.
        text: String,
    },
    /// An element where the schema does not allow it.
    #[error("<{element}> at byte {offset}: not allowed inside <{parent}>")]
    Misplaced {
        /// The element.
        element: Element,
        /// The element it is in.
        parent: Element,
        /// Its offset.
        offset: usize,
    },
    /// Rules 3, 4, 10: a required element is missing.
    #[error("<{parent}> at byte {offset}: missing <{element}>")]
    MissingElement {
        /// The missing element.
        element: Element,
        /// Where it should be.
        parent: Element,
        /// The parent's offset.
        offset: usize,
    },
    /// Rules 3, 4, 10: a second element where exactly one is allowed.
    #[error(
        "<{element}> at byte {offset}: a second <{element}> in <{parent}> (exactly one is allowed)"
    )]
    Duplicate {
        /// The element.
        element: Element,
        /// The element it is in.
        parent: Element,
        /// Offset of the second one.
        offset: usize,
    },
    /// Rules 5, 7: more than `max` elements.
    #[error("<{element}> at byte {offset}: more than {max} <{element}> elements in <{parent}>")]
    TooMany {
        /// The element.
        element: Element,
        /// The element they are in.
        parent: Element,
        /// Offset of the first one over the limit.
        offset: usize,
        /// The limit.
        max: usize,
    },
    /// Rule 3: `<response>` has no content (after trimming).
    #[error("<{element}> at byte {offset}: empty content")]
    EmptyContent {
        /// The element.
        element: Element,
        /// Its offset.
        offset: usize,
    },
    /// Rules 6, 8: a required attribute is missing.
    #[error("<{element}> at byte {offset}: missing attribute `{attribute}`")]
    MissingAttribute {
        /// The element.
        element: Element,
        /// The attribute.
        attribute: &'static str,
        /// The element's offset.
        offset: usize,
    },
    /// Rules 6, 8: a required attribute is written without a value (`<subject name …>`).
    #[error("<{element}> at byte {offset}: attribute `{attribute}` has no value")]
    AttributeWithoutValue {
        /// The element.
        element: Element,
        /// The attribute.
        attribute: &'static str,
        /// The element's offset.
        offset: usize,
    },
    /// Rules 6, 9: an attribute value of the wrong type or range.
    #[error("<{element}> at byte {offset}: attribute `{attribute}`={value:?} {problem}")]
    InvalidAttribute {
        /// The element.
        element: Element,
        /// The attribute.
        attribute: &'static str,
        /// Its value, entities decoded.
        value: String,
        /// What is wrong with it.
        problem: AttrProblem,
        /// The element's offset.
        offset: usize,
    },
}

/// The parser configuration for the contract (see the module docs).
pub fn config() -> Config {
    Config::default()
        .with_tags(Element::ALL.map(Element::name))
        .expect("the contract's tag names are valid Names")
        .with_autoclose_on_any_tag(false)
        .with_default_recovery(Strategy::ForwardUntilTag)
        .with_unknown_mode(UnknownMode::Strip)
        .with_empty_elements(EmptyElements::Marker)
        .with_declarations(Declarations::Drop)
        .with_trim_punctuation(false)
}

/// Reads and validates a whole response at once.
///
/// # Errors
/// The first violation of the contract, as [`ResponseReader::finish`].
pub fn read_response(input: &str) -> Result<Validated, ResponseError> {
    let mut reader = ResponseReader::new();
    reader.update(input);
    reader.finish()
}

/// Reads a `<llmResponse>` from a stream of text chunks (e.g. LLM tokens).
#[derive(Debug)]
pub struct ResponseReader {
    parser: StreamParser,
    collector: Collector,
}

impl Default for ResponseReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseReader {
    /// A reader with [`config()`].
    pub fn new() -> Self {
        ResponseReader {
            parser: StreamParser::new(&config()),
            collector: Collector::default(),
        }
    }

    /// Feeds one chunk. Returns the text of `<response>` that became final with it (a
    /// preview for display: validation happens at [`finish`](ResponseReader::finish)).
    pub fn update(&mut self, chunk: &str) -> &str {
        self.collector.delta.clear();
        // `update` only fails after `finish` (which consumes the reader) or after invalid
        // UTF-8 (impossible for `&str` chunks).
        let events = self
            .parser
            .update(chunk)
            .expect("a text chunk is always accepted before finish");
        for event in events {
            self.collector.observe(event);
        }
        &self.collector.delta
    }

    /// Ends the input, rebuilds the element tree and validates it.
    ///
    /// # Errors
    /// The first violation of the contract's rules, in the order given in the module docs.
    pub fn finish(mut self) -> Result<Validated, ResponseError> {
        let events = self
            .parser
            .finish()
            .expect("finish is called once, on text input");
        for event in events {
            self.collector.observe(event);
        }
        let tree = Tree::build(self.collector.elements.into_values().collect());
        tree.validate(&self.collector.outside)
    }
}

/// Longest text kept from outside the root, in characters (for the error message).
const OUTSIDE_SNIPPET_CHARS: usize = 60;

/// Text of one element: the pieces of its segments, with their output positions, so it can
/// be cut at an output position.
#[derive(Debug, Default)]
struct Text {
    text: String,
    /// `(output position, byte index in text)` of each piece.
    pieces: Vec<(usize, usize)>,
}

impl Text {
    fn push(&mut self, pos: usize, s: &str) {
        self.pieces.push((pos, self.text.len()));
        self.text.push_str(s);
    }

    /// The text before output position `cut` (all of it for `None`).
    fn before(&self, cut: Option<usize>) -> &str {
        let Some(cut) = cut else {
            return &self.text;
        };
        // Pieces are in output order and contiguous in `text`: keep each one's part before
        // `cut` (a character boundary: a segment start or a marker position).
        let mut end = 0;
        for (i, &(pos, at)) in self.pieces.iter().enumerate() {
            if pos >= cut {
                break;
            }
            let next = self.pieces.get(i + 1).map_or(self.text.len(), |p| p.1);
            end = at + (next - at).min(cut - pos);
        }
        &self.text[..end]
    }
}

/// One element seen in the event stream.
#[derive(Debug)]
struct Record {
    element: Element,
    annotation: Annotation,
    /// Output position of its first content (or of its marker).
    out_start: usize,
    text: Text,
}

/// What the reader keeps while the events arrive.
#[derive(Debug, Default)]
struct Collector {
    /// Every element, by source offset of its start tag.
    elements: BTreeMap<usize, Record>,
    /// The start of the text outside every element, leading whitespace skipped (enough of
    /// it for [`snippet`]).
    outside: String,
    /// The `<response>` whose text is previewed (the first one seen).
    previewed: Option<usize>,
    /// Preview text made final by the current update.
    delta: String,
}

impl Collector {
    fn observe(&mut self, event: Event) {
        match event {
            Event::Text(seg) => self.text(&seg),
            Event::Marker(m) => {
                self.record(m.annotation(), m.pos());
            }
        }
    }

    fn text(&mut self, seg: &Segment) {
        let anns = seg.annotations();
        let Some(innermost) = anns.last() else {
            self.push_outside(seg.text());
            return;
        };
        for a in anns {
            if let Some(rec) = self.record(a, seg.start()) {
                if rec.element.keeps_text() {
                    rec.text.push(seg.start(), seg.text());
                }
            }
        }
        if innermost.tag() == Element::Response.name()
            && *self.previewed.get_or_insert(innermost.source_offset()) == innermost.source_offset()
        {
            self.delta.push_str(seg.text());
        }
    }

    /// The record of the element behind `a`, created at output position `pos` if new.
    fn record(&mut self, a: &Annotation, pos: usize) -> Option<&mut Record> {
        match self.elements.entry(a.source_offset()) {
            Entry::Occupied(e) => Some(e.into_mut()),
            Entry::Vacant(e) => Some(e.insert(Record {
                element: Element::from_tag(a.tag())?,
                annotation: a.clone(),
                out_start: pos,
                text: Text::default(),
            })),
        }
    }

    fn push_outside(&mut self, mut s: &str) {
        if self.outside.is_empty() {
            s = s.trim_start();
        }
        let have = self.outside.chars().count();
        self.outside.extend(
            s.chars()
                .take((4 * OUTSIDE_SNIPPET_CHARS).saturating_sub(have)),
        );
    }
}

/// An element placed in the tree.
#[derive(Debug)]
struct Node {
    rec: Record,
    children: Vec<usize>,
    /// Set when the reader ended the element early: its end tag was missing and an element
    /// it cannot contain started inside it.
    cut: Option<Cut>,
}

/// Where the reader ended an element whose end tag was missing: before `element`.
#[derive(Debug, Clone, Copy)]
struct Cut {
    element: Element,
    /// Source offset of `element`.
    offset: usize,
    /// Output position where `element`'s content starts.
    out_pos: usize,
}

impl Node {
    fn element(&self) -> Element {
        self.rec.element
    }

    fn offset(&self) -> usize {
        self.rec.annotation.source_offset()
    }

    /// After finish every annotation knows how it closed.
    fn close(&self) -> Close {
        self.rec.annotation.close().unwrap_or(Close::EndOfInput)
    }

    /// Source offset of the markup that closed it; `None` for the end of the input.
    fn end(&self) -> Option<usize> {
        match self.close() {
            Close::EndTag { offset }
            | Close::AutoClosed { offset }
            | Close::Reopened { offset } => Some(offset),
            Close::SelfClosing => Some(self.offset()),
            _ => None,
        }
    }

    fn text(&self) -> &str {
        self.rec.text.before(self.cut.map(|c| c.out_pos))
    }

    /// The value of a required string attribute.
    fn attr(&self, attribute: &'static str) -> Result<&str, ResponseError> {
        let (element, offset) = (self.element(), self.offset());
        match self.rec.annotation.attrs().get(attribute) {
            None => Err(ResponseError::MissingAttribute {
                element,
                attribute,
                offset,
            }),
            Some(AttrValue::True) => Err(ResponseError::AttributeWithoutValue {
                element,
                attribute,
                offset,
            }),
            Some(AttrValue::Str(value)) => Ok(value),
        }
    }

    fn invalid(&self, attribute: &'static str, value: &str, problem: AttrProblem) -> ResponseError {
        ResponseError::InvalidAttribute {
            element: self.element(),
            attribute,
            value: value.to_string(),
            problem,
            offset: self.offset(),
        }
    }
}

/// The elements as a tree (an arena in document order).
#[derive(Debug)]
struct Tree {
    nodes: Vec<Node>,
    roots: Vec<usize>,
}

impl Tree {
    /// Places each element (given in source order) under the innermost element whose extent
    /// contains it, ending early any recovered element that cannot contain it.
    fn build(records: Vec<Record>) -> Tree {
        let mut nodes: Vec<Node> = records
            .into_iter()
            .map(|rec| Node {
                rec,
                children: Vec::new(),
                cut: None,
            })
            .collect();
        let mut roots = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        for i in 0..nodes.len() {
            let (element, offset, out_start) = (
                nodes[i].element(),
                nodes[i].offset(),
                nodes[i].rec.out_start,
            );
            while let Some(&top) = stack.last() {
                let node = &mut nodes[top];
                if node.end().is_some_and(|end| end <= offset) {
                    stack.pop();
                } else if node.close().is_recovery() && !node.element().allows(element) {
                    node.cut = Some(Cut {
                        element,
                        offset,
                        out_pos: out_start,
                    });
                    stack.pop();
                } else {
                    break;
                }
            }
            match stack.last() {
                Some(&parent) => nodes[parent].children.push(i),
                None => roots.push(i),
            }
            stack.push(i);
        }
        Tree { nodes, roots }
    }

    fn children(&self, i: usize) -> impl Iterator<Item = &Node> + '_ {
        self.nodes[i].children.iter().map(|&c| &self.nodes[c])
    }

    /// The children of `parent` that are `element`, after checking that every child is
    /// allowed there and that their number is within `min..=max`.
    fn expect(
        &self,
        parent: usize,
        element: Element,
        min: usize,
        max: usize,
    ) -> Result<Vec<usize>, ResponseError> {
        let p = &self.nodes[parent];
        let found: Vec<usize> = p
            .children
            .iter()
            .copied()
            .filter(|&c| self.nodes[c].element() == element)
            .collect();
        if found.len() < min {
            return Err(ResponseError::MissingElement {
                element,
                parent: p.element(),
                offset: p.offset(),
            });
        }
        if let Some(&extra) = found.get(max) {
            let offset = self.nodes[extra].offset();
            return Err(if max == 1 {
                ResponseError::Duplicate {
                    element,
                    parent: p.element(),
                    offset,
                }
            } else {
                ResponseError::TooMany {
                    element,
                    parent: p.element(),
                    offset,
                    max,
                }
            });
        }
        Ok(found)
    }

    /// Every child of `i` must be allowed there.
    fn check_children(&self, i: usize) -> Result<(), ResponseError> {
        let parent = self.nodes[i].element();
        match self.children(i).find(|c| !parent.allows(c.element())) {
            Some(c) => Err(ResponseError::Misplaced {
                element: c.element(),
                parent,
                offset: c.offset(),
            }),
            None => Ok(()),
        }
    }

    fn validate(&self, outside: &str) -> Result<Validated, ResponseError> {
        // Rule 2: one root, `<llmResponse>`, and nothing but whitespace around it.
        let &root = self.roots.first().ok_or(ResponseError::MissingRoot)?;
        if let Some(&other) = self
            .roots
            .iter()
            .find(|&&r| self.nodes[r].element() != Element::LlmResponse || r != root)
        {
            return Err(ResponseError::UnexpectedTopLevel {
                element: self.nodes[other].element(),
                offset: self.nodes[other].offset(),
            });
        }
        if !outside.trim().is_empty() {
            return Err(ResponseError::TextOutsideRoot {
                text: snippet(outside),
            });
        }

        // Rules 3 and 4.
        self.check_children(root)?;
        let response = self.expect(root, Element::Response, 1, 1)?[0];
        let analysis = self.expect(root, Element::Analysis, 1, 1)?[0];
        self.check_children(response)?;
        let response_text = self.nodes[response].text().trim();
        if response_text.is_empty() {
            return Err(ResponseError::EmptyContent {
                element: Element::Response,
                offset: self.nodes[response].offset(),
            });
        }

        // Rules 5 and 10.
        self.check_children(analysis)?;
        let subjects = self.expect(analysis, Element::Subject, 0, 3)?;
        let summary = self.expect(analysis, Element::SummaryUpdate, 1, 1)?[0];

        // Rules 6 to 9.
        let subjects = subjects
            .into_iter()
            .map(|s| self.subject(s))
            .collect::<Result<Vec<_>, _>>()?;
        self.check_children(summary)?;

        Ok(Validated {
            value: LlmResponse {
                response: response_text.to_string(),
                subjects,
                summary_update: self.nodes[summary].text().trim().to_string(),
            },
            recoveries: self.recoveries(),
        })
    }

    fn subject(&self, i: usize) -> Result<Subject, ResponseError> {
        let node = &self.nodes[i];
        let name = node.attr("name")?;
        let description = node.attr("description")?;
        let is_new = match node.attr("isNew")? {
            "true" => true,
            "false" => false,
            other => return Err(node.invalid("isNew", other, AttrProblem::NotABoolean)),
        };
        self.check_children(i)?;
        let keywords = self
            .expect(i, Element::Keyword, 0, 10)?
            .into_iter()
            .map(|k| self.keyword(k))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Subject {
            name: name.to_string(),
            description: description.to_string(),
            is_new,
            keywords,
        })
    }

    fn keyword(&self, i: usize) -> Result<Keyword, ResponseError> {
        let node = &self.nodes[i];
        let term = node.attr("term")?;
        let raw = node.attr("confidence")?;
        // Surrounding whitespace is tolerated (`confidence=" 0.9"`); nothing else is.
        let confidence: f64 = raw
            .trim()
            .parse()
            .map_err(|_| node.invalid("confidence", raw, AttrProblem::NotANumber))?;
        if !(0.0..=1.0).contains(&confidence) {
            return Err(node.invalid("confidence", raw, AttrProblem::OutOfRange));
        }
        self.check_children(i)?;
        Ok(Keyword {
            term: term.to_string(),
            confidence,
        })
    }

    /// Every element closed by recovery, with where the reader took it to end.
    fn recoveries(&self) -> Vec<Recovery> {
        self.nodes
            .iter()
            .filter(|n| n.close().is_recovery())
            .map(|n| Recovery {
                element: n.element(),
                offset: n.offset(),
                closed: match (n.cut, n.close()) {
                    (Some(cut), _) => ClosedBy::Before {
                        element: cut.element,
                        offset: cut.offset,
                    },
                    (None, Close::AutoClosed { offset }) => self
                        .nodes
                        .iter()
                        .find(|o| o.close() == Close::EndTag { offset })
                        .map_or(ClosedBy::Other(Close::AutoClosed { offset }), |o| {
                            ClosedBy::OuterEndTag {
                                element: o.element(),
                                offset,
                            }
                        }),
                    (None, Close::EndOfInput) => ClosedBy::EndOfInput,
                    (None, Close::SpanLimit) => ClosedBy::SpanLimit,
                    (None, other) => ClosedBy::Other(other),
                },
            })
            .collect()
    }
}

/// `s` trimmed and cut to `OUTSIDE_SNIPPET_CHARS` characters (with `…` when cut).
fn snippet(s: &str) -> String {
    let s = s.trim();
    if s.chars().count() <= OUTSIDE_SNIPPET_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(OUTSIDE_SNIPPET_CHARS).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

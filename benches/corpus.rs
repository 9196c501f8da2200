//! Deterministic LLM-like corpora for benches and memory checks (shared by the benches and
//! the `gen_corpus`, `profile_parse` and `vs_kindaxml` examples), and the quick-xml event loop
//! they are compared with. Nothing large is committed.
#![allow(dead_code)]

use std::io;

/// A corpus shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Markdown paragraphs and lists with a recognized tag about every 200 bytes: closed and
    /// postfix cites, notes, self-closing todos, broken quotes, stray closers, CDATA, unknown
    /// tags, code fences.
    Prose,
    /// A tag about every 20 bytes.
    Dense,
    /// No `<` at all.
    Plain,
    /// Non-Latin prose with postfix cites.
    Unicode,
    /// `<a` with no `>`.
    LtFlood,
    /// Attribute quotes that never close, with `<` inside.
    OpenQuote,
    /// One line of postfix cites, no newline.
    OneLine,
    /// Bare `&` and unfinished references.
    AmpFlood,
    /// Deeply nested open tags, then their closers (for nested mode).
    DeepNest,
}

impl Shape {
    pub const ALL: [Shape; 9] = [
        Shape::Prose,
        Shape::Dense,
        Shape::Plain,
        Shape::Unicode,
        Shape::LtFlood,
        Shape::OpenQuote,
        Shape::OneLine,
        Shape::AmpFlood,
        Shape::DeepNest,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Prose => "prose",
            Shape::Dense => "dense",
            Shape::Plain => "plain",
            Shape::Unicode => "unicode",
            Shape::LtFlood => "lt_flood",
            Shape::OpenQuote => "open_quote",
            Shape::OneLine => "one_line",
            Shape::AmpFlood => "amp_flood",
            Shape::DeepNest => "deep_nest",
        }
    }

    pub fn from_name(s: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|x| x.name() == s)
    }

    /// The shapes built to break parsers (measured for linear scaling), as opposed to the
    /// LLM-like ones.
    pub fn is_hostile(self) -> bool {
        !matches!(
            self,
            Shape::Prose | Shape::Dense | Shape::Plain | Shape::Unicode
        )
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "release",
    "latency",
    "engine",
    "we",
    "shipped",
    "customers",
    "reported",
    "fewer",
    "crashes",
    "after",
    "migration",
    "and",
    "throughput",
    "improved",
    "by",
    "forty",
    "percent",
    "in",
    "most",
    "regions",
    "while",
    "costs",
    "stayed",
    "flat",
    "because",
    "the",
    "cache",
    "now",
    "holds",
    "hot",
    "keys",
    "longer",
    "than",
    "before",
    "data",
];
const UNICODE_WORDS: &[&str] = &[
    "発表",
    "された",
    "新しい",
    "エンジン",
    "は",
    "遅延",
    "を",
    "減らし",
    "ました",
    "Производительность",
    "выросла",
    "на",
    "сорок",
    "процентов",
    "Η",
    "απόδοση",
    "βελτιώθηκε",
    "σημαντικά",
    "数据",
    "显示",
    "错误",
    "减少",
];

fn sentence(rng: &mut Rng, words: &[&str], out: &mut String) {
    let n = 6 + rng.below(10);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(rng.pick(words));
    }
}

/// One unit of the shape (a paragraph, a list, a tag…).
fn unit(shape: Shape, rng: &mut Rng, id: &mut u64, out: &mut String) {
    *id += 1;
    let id = *id % 97;
    match shape {
        Shape::Prose => {
            match rng.below(10) {
                0 => {
                    out.push_str("## Section ");
                    out.push_str(&id.to_string());
                    out.push_str("\n\n");
                }
                1 => {
                    for _ in 0..3 {
                        out.push_str("- ");
                        sentence(rng, WORDS, out);
                        out.push_str(&format!(" <todo owner=ana id={id}/>\n"));
                    }
                    out.push('\n');
                }
                2 => {
                    out.push_str("```rust\nlet v: Vec<u8> = read(path)?; if a < b && c > d { return; }\n```\n\n");
                }
                _ => {
                    // A paragraph: one long line, about one recognized tag per 200 bytes.
                    for k in 0..4 {
                        sentence(rng, WORDS, out);
                        match (k + rng.below(7)) % 7 {
                            0 => out.push_str(&format!(" <cite id={id}>.")),
                            1 => out.push_str(&format!(" <cite id=\"{id}\" src='dashboard>.")),
                            2 => {
                                out.push_str(" <note>");
                                sentence(rng, WORDS, out);
                                out.push_str("</note>.");
                            }
                            3 => out.push_str(
                                " and R&D said <b>so</b>, see <![CDATA[a<b]]> &amp; more</x>.",
                            ),
                            4 => {
                                out.push_str(" <cite id=");
                                out.push_str(&id.to_string());
                                out.push('>');
                                sentence(rng, WORDS, out);
                                out.push_str("</cite>.");
                            }
                            _ => out.push('.'),
                        }
                        out.push(' ');
                    }
                    out.push_str("\n\n");
                }
            }
        }
        Shape::Dense => {
            out.push_str(rng.pick(WORDS));
            out.push(' ');
            out.push_str(match rng.below(5) {
                0 => "<cite id=1>. ",
                1 => "<note>x</note> ",
                2 => "<todo/> ",
                3 => "<b>b</b> ",
                _ => "<cite id=2>ok</cite> ",
            });
            if rng.below(8) == 0 {
                out.push('\n');
            }
        }
        Shape::Plain => {
            sentence(rng, WORDS, out);
            out.push_str(if rng.below(4) == 0 { ".\n\n" } else { ". " });
        }
        Shape::Unicode => {
            sentence(rng, UNICODE_WORDS, out);
            out.push_str(if rng.below(2) == 0 {
                " <cite id=1>。"
            } else {
                "。"
            });
            if rng.below(4) == 0 {
                out.push('\n');
            }
        }
        Shape::LtFlood => out.push_str("<a"),
        Shape::OpenQuote => out.push_str("<a x=\"text <b y=1 "),
        Shape::OneLine => {
            sentence(rng, WORDS, out);
            out.push_str(&format!(" <cite id={id}>. "));
        }
        Shape::AmpFlood => out.push_str(rng.pick(&["&", "&amp", "&#12", "& ", "&&", "&#x1F"])),
        Shape::DeepNest => out.push_str("<a><b>"),
    }
}

/// The root element every well-formed variant is wrapped in: its start and end tags.
const OPEN: &str = "<answer>\n";
const CLOSE: &str = "</answer>\n";

/// The well-formed variant of prose for strict XML parsers (quick-xml): the same paragraphs,
/// every tag closed, markup-like text escaped, wrapped in a root element. About `size` bytes.
pub fn prose_well_formed(size: usize, seed: u64) -> String {
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(size + 64);
    out.push_str(OPEN);
    let mut id = 0u64;
    while out.len() < size {
        id += 1;
        let id = id % 97;
        match rng.below(10) {
            0 => out.push_str(&format!("<h2>Section {id}</h2>\n\n")),
            1 => {
                for _ in 0..3 {
                    out.push_str("- ");
                    sentence(&mut rng, WORDS, &mut out);
                    out.push_str(&format!(" <todo owner=\"ana\" id=\"{id}\"/>\n"));
                }
                out.push('\n');
            }
            2 => out.push_str("<code>let v: Vec&lt;u8&gt; = read(path)?; if a &lt; b &amp;&amp; c &gt; d { return; }</code>\n\n"),
            _ => {
                for k in 0..4 {
                    match (k + rng.below(7)) % 7 {
                        0 | 4 => {
                            out.push_str(&format!("<cite id=\"{id}\">"));
                            sentence(&mut rng, WORDS, &mut out);
                            out.push_str("</cite>.");
                        }
                        1 => {
                            out.push_str(&format!("<cite id=\"{id}\" src=\"dashboard\">"));
                            sentence(&mut rng, WORDS, &mut out);
                            out.push_str("</cite>.");
                        }
                        2 => {
                            sentence(&mut rng, WORDS, &mut out);
                            out.push_str(" <note>");
                            sentence(&mut rng, WORDS, &mut out);
                            out.push_str("</note>.");
                        }
                        3 => {
                            sentence(&mut rng, WORDS, &mut out);
                            out.push_str(" and R&amp;D said <b>so</b>, see <![CDATA[a<b]]> &amp; more.");
                        }
                        _ => {
                            sentence(&mut rng, WORDS, &mut out);
                            out.push('.');
                        }
                    }
                    out.push(' ');
                }
                out.push_str("\n\n");
            }
        }
    }
    out.push_str(CLOSE);
    out
}

/// The well-formed variant of a shape, for strict XML parsers (quick-xml's Reader): the same
/// kind of content as XML 1.0 writes it, every element closed, wrapped in a root element.
/// About `size` bytes (it ends at the first whole unit past `size`, then closes the root).
///
/// - `prose`: [`prose_well_formed`].
/// - `dense`, `unicode`, `one_line`: each postfix cite becomes an element around the text it
///   cites (`<cite id="1">word</cite>`); the other tags are already closed, attribute values
///   get quotes.
/// - `plain`, `lt_flood`, `amp_flood`: the shape's own text escaped (`<` as `&lt;`, `&` as
///   `&amp;`), so its text content is the shape's corpus itself.
/// - `open_quote`: each unterminated attribute closed, its `<` escaped
///   (`<a x="text &lt;b y=1 "/>`).
/// - `deep_nest`: the same `<a><b>` nesting, then the text `deep`, then every closer.
pub fn well_formed(shape: Shape, size: usize, seed: u64) -> String {
    if shape == Shape::Prose {
        return prose_well_formed(size, seed);
    }
    let mut rng = Rng(seed);
    let mut out = String::with_capacity(size + 64);
    out.push_str(OPEN);
    if shape == Shape::DeepNest {
        // 14 bytes per level (`<a><b>` and `</b></a>`), enough levels to reach `size`.
        let levels = size
            .saturating_sub(OPEN.len() + CLOSE.len() + 4)
            .div_ceil(14);
        out.push_str(&"<a><b>".repeat(levels));
        out.push_str("deep");
        out.push_str(&"</b></a>".repeat(levels));
        out.push_str(CLOSE);
        return out;
    }
    let mut id = 0u64;
    let mut text = String::new();
    while out.len() < size {
        match shape {
            Shape::Dense => {
                let w = rng.pick(WORDS);
                match rng.below(5) {
                    0 => out.push_str(&format!("<cite id=\"1\">{w}</cite>. ")),
                    1 => out.push_str(&format!("{w} <note>x</note> ")),
                    2 => out.push_str(&format!("{w} <todo/> ")),
                    3 => out.push_str(&format!("{w} <b>b</b> ")),
                    _ => out.push_str(&format!("{w} <cite id=\"2\">ok</cite> ")),
                }
                if rng.below(8) == 0 {
                    out.push('\n');
                }
            }
            Shape::Unicode => {
                text.clear();
                sentence(&mut rng, UNICODE_WORDS, &mut text);
                if rng.below(2) == 0 {
                    out.push_str(&format!("<cite id=\"1\">{text}</cite>。"));
                } else {
                    out.push_str(&text);
                    out.push('。');
                }
                if rng.below(4) == 0 {
                    out.push('\n');
                }
            }
            Shape::OneLine => {
                id += 1;
                text.clear();
                sentence(&mut rng, WORDS, &mut text);
                out.push_str(&format!("<cite id=\"{}\">{text}</cite>. ", id % 97));
            }
            Shape::OpenQuote => out.push_str("<a x=\"text &lt;b y=1 \"/>"),
            _ => {
                // Plain, LtFlood, AmpFlood: the shape's own units, escaped.
                text.clear();
                unit(shape, &mut rng, &mut id, &mut text);
                for c in text.chars() {
                    match c {
                        '&' => out.push_str("&amp;"),
                        '<' => out.push_str("&lt;"),
                        _ => out.push(c),
                    }
                }
            }
        }
    }
    out.push_str(CLOSE);
    out
}

/// Writes `size` bytes of `shape` (cut at a char boundary) to `sink`.
pub fn generate(
    shape: Shape,
    size: u64,
    seed: u64,
    sink: &mut dyn FnMut(&str) -> io::Result<()>,
) -> io::Result<()> {
    let mut rng = Rng(seed);
    let mut id = 0;
    let mut buf = String::with_capacity(1 << 16);
    // DeepNest: half opening tags, then a body, then the closers.
    let nest_half = size / 2;
    let mut written: u64 = 0;
    let mut opened: u64 = 0;
    while written < size {
        buf.clear();
        while buf.len() < 1 << 15 {
            if shape == Shape::DeepNest && written + buf.len() as u64 >= nest_half {
                break;
            }
            unit(shape, &mut rng, &mut id, &mut buf);
            if shape == Shape::DeepNest {
                opened += 1;
            }
        }
        if shape == Shape::DeepNest && written + buf.len() as u64 >= nest_half && buf.is_empty() {
            {
                // Body and closers.
                buf.push_str("deep");
                while buf.len() < 1 << 15 && opened > 0 {
                    buf.push_str("</b></a>");
                    opened -= 1;
                }
                if opened == 0 && buf.len() < 8 {
                    buf.push_str(" tail");
                }
            }
        }
        let left = (size - written) as usize;
        let mut cut = buf.len().min(left);
        while !buf.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut == 0 {
            break;
        }
        sink(&buf[..cut])?;
        written += cut as u64;
    }
    Ok(())
}

/// The whole corpus as a string.
pub fn corpus(shape: Shape, size: usize, seed: u64) -> String {
    let mut s = String::with_capacity(size);
    let _ = generate(shape, size as u64, seed, &mut |c: &str| {
        s.push_str(c);
        Ok(())
    });
    s
}

/// One line per kind of markup the prose corpus holds, for the instruction counts per
/// construct (`profile_parse` with `CONSTRUCT`, `scripts/bench_extra.sh`): its name, the line
/// as the corpus writes it, and the line as its well-formed variant writes it (for quick-xml).
/// `{}` is the line's number, so that no two cites are equal (equal ones next to each other
/// would merge).
pub const CONSTRUCTS: [(&str, &str, &str); 7] = [
    (
        "text",
        "shipped cache release by the keys stayed costs throughput {}.\n",
        "shipped cache release by the keys stayed costs throughput {}.\n",
    ),
    (
        "postfix_cite",
        "shipped cache release by the keys stayed costs <cite id={}>.\n",
        "<cite id=\"{}\">shipped cache release by the keys stayed costs</cite>.\n",
    ),
    (
        "postfix_cite_2_attrs",
        "shipped cache release by the keys stayed costs <cite id=\"{}\" src='dashboard>.\n",
        "<cite id=\"{}\" src=\"dashboard\">shipped cache release by the keys stayed costs</cite>.\n",
    ),
    (
        "closed_cite",
        "shipped cache <cite id={}>release by the keys stayed costs</cite>.\n",
        "shipped cache <cite id=\"{}\">release by the keys stayed costs</cite>.\n",
    ),
    (
        "note",
        "shipped cache <note>release by the keys {} stayed</note> costs throughput.\n",
        "shipped cache <note>release by the keys {} stayed</note> costs throughput.\n",
    ),
    (
        "todo_marker",
        "shipped cache release by the keys stayed costs <todo owner=ana id={}/>\n",
        "shipped cache release by the keys stayed costs <todo owner=\"ana\" id=\"{}\"/>\n",
    ),
    (
        "unknown_tags",
        "shipped {} and R&D said <b>so</b>, see <![CDATA[a<b]]> &amp; more</x>.\n",
        "shipped {} and R&amp;D said <b>so</b>, see <![CDATA[a<b]]> &amp; more.\n",
    ),
];

/// `lines` lines of the construct `name` (see [`CONSTRUCTS`]), numbered from 0; the
/// well-formed form wrapped in a root element, as [`well_formed`] wraps a shape.
pub fn construct(name: &str, lines: usize, well_formed: bool) -> Option<String> {
    let &(_, line, wf_line) = CONSTRUCTS.iter().find(|c| c.0 == name)?;
    let line = if well_formed { wf_line } else { line };
    let mut out = String::new();
    if well_formed {
        out.push_str(OPEN);
    }
    for i in 0..lines {
        out.push_str(&line.replace("{}", &i.to_string()));
    }
    if well_formed {
        out.push_str(CLOSE);
    }
    Some(out)
}

/// quick-xml's Reader event loop: counts events (text, start, end, empty, CDATA).
pub fn quick_xml_events(input: &str) -> usize {
    let mut r = quick_xml::Reader::from_str(input);
    let mut n = 0;
    loop {
        match r.read_event() {
            Ok(quick_xml::events::Event::Eof) => return n,
            Ok(_) => n += 1,
            Err(e) => panic!("well-formed corpus rejected: {e}"),
        }
    }
}

/// The document [`quick_xml_document`] builds: what `parse()` gives on a well-formed input
/// with [`compat_config`] (text as written, entities and CDATA included; a recognized
/// element an annotation over its text, a recognized empty element a marker; unknown tags
/// dropped), owned, in the leanest form we found: one text string, and the rest as ranges
/// and indices into flat lists, so that an annotation costs no allocation of its own, a
/// segment 32 bytes and no reference count, and dropping it all seven frees.
#[derive(Debug, Default)]
pub struct QxDocument {
    /// The output text.
    pub text: String,
    /// Each segment: its range of `text`, and its range of `stacks` (the annotations that
    /// cover it, outermost first). Adjacent runs under equal annotations are one segment.
    pub segments: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Indices into `annotations`.
    pub stacks: Vec<u32>,
    /// Each marker: its position in `text`, and its index into `annotations`.
    pub markers: Vec<(usize, u32)>,
    pub annotations: Vec<QxAnnotation>,
    /// The attribute names and values of every annotation, one after another.
    pub attr_text: String,
    /// Each attribute: its name's and its value's range of `attr_text`.
    pub attr_pairs: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
}

/// One recognized tag of a [`QxDocument`].
#[derive(Debug)]
pub struct QxAnnotation {
    /// Index into the tag names given to [`quick_xml_document`].
    pub tag: u32,
    /// Its range of `attr_pairs`.
    pub attrs: std::ops::Range<usize>,
    /// The byte offset of its `<` in the input.
    pub source_offset: usize,
}

/// quick-xml's Reader building the same document as `parse()` with [`compat_config`] on a
/// well-formed input (tests/corpus.rs checks that it is the same), with `tags` recognized:
/// the work quick-xml's event loop leaves out (attributes read, text and annotations kept)
/// added to it, so that `parse()` can be compared with quick-xml doing the same job
/// (DESIGN.md, decision 109). It follows only the rules a well-formed input needs (no
/// recovery, no trimming), and skips quick-xml's duplicate-attribute check.
pub fn quick_xml_document(input: &str, tags: &[&str]) -> QxDocument {
    use quick_xml::events::{BytesStart, Event};
    fn annotate(d: &mut QxDocument, e: &BytesStart, tag: usize, at: u64) -> u32 {
        let from = d.attr_pairs.len();
        let mut attrs = e.attributes();
        attrs.with_checks(false);
        for a in attrs {
            let a = a.expect("well-formed attribute");
            let k = d.attr_text.len();
            d.attr_text.push_str(a.key.0);
            let v = d.attr_text.len();
            d.attr_text.push_str(&a.value);
            d.attr_pairs.push((k..v, v..d.attr_text.len()));
        }
        d.annotations.push(QxAnnotation {
            tag: tag as u32,
            attrs: from..d.attr_pairs.len(),
            source_offset: at as usize,
        });
        (d.annotations.len() - 1) as u32
    }
    // Ends the text run since `from` under the annotations `open`: one more segment, or
    // the last one longer if it has the same annotations.
    fn flush(d: &mut QxDocument, open: &[u32], from: &mut usize) {
        let end = d.text.len();
        if end == *from {
            return;
        }
        if let Some((text, stack)) = d.segments.last_mut() {
            if d.stacks[stack.clone()] == *open {
                text.end = end;
                *from = end;
                return;
            }
        }
        let s = d.stacks.len();
        d.stacks.extend_from_slice(open);
        d.segments.push((*from..end, s..d.stacks.len()));
        *from = end;
    }
    let recognized = |name: &str| tags.iter().position(|t| *t == name);
    let mut r = quick_xml::Reader::from_str(input);
    // (The text is at most the input: its room taken at once, as a caller would.)
    let mut d = QxDocument {
        text: String::with_capacity(input.len()),
        ..QxDocument::default()
    };
    let mut open: Vec<u32> = Vec::new();
    let mut from = 0;
    loop {
        let at = r.buffer_position();
        match r.read_event().expect("well-formed input") {
            Event::Text(t) => d.text.push_str(&t),
            Event::CData(t) => d.text.push_str(&t),
            Event::GeneralRef(t) => {
                d.text.push('&');
                d.text.push_str(&t);
                d.text.push(';');
            }
            Event::Start(e) => {
                let Some(k) = recognized(e.name().0) else {
                    continue;
                };
                flush(&mut d, &open, &mut from);
                let a = annotate(&mut d, &e, k, at);
                open.push(a);
            }
            Event::End(e) if recognized(e.name().0).is_some() => {
                flush(&mut d, &open, &mut from);
                open.pop();
            }
            Event::Empty(e) => {
                let Some(k) = recognized(e.name().0) else {
                    continue;
                };
                let a = annotate(&mut d, &e, k, at);
                d.markers.push((d.text.len(), a));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    flush(&mut d, &open, &mut from);
    d
}

/// `input` as `&str` tokens of at most `n` bytes, cut at char boundaries (longer only where
/// one char is longer): chunks as an LLM client hands them out.
pub fn str_tokens(input: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut rest = input;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = n.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

/// The baseline for chunked input that gives up streaming: byte chunks of `n` bytes (as
/// the stream benches cut them) appended to a buffer, which is then validated and parsed
/// once. The buffer is sized for the whole input up front, which favours the baseline: a
/// client reading a token stream does not know its length. Nothing comes out before the
/// last chunk, so this is not a way to stream; it shows what receiving the same chunks
/// costs next to parsing them as they come (DESIGN.md, decision 86).
pub fn collected(
    config: &kindaxml_stream::Config,
    input: &str,
    n: usize,
) -> kindaxml_stream::Document {
    let mut buf = Vec::with_capacity(input.len());
    for c in input.as_bytes().chunks(n) {
        buf.extend_from_slice(c);
    }
    // (Validated with SIMD, as the stream validates its queue.)
    kindaxml_stream::parse(
        simdutf8::basic::from_utf8(&buf).expect("UTF-8 input"),
        config,
    )
}

/// The configuration of the scaling benches and measurements on the hostile shapes:
/// defaults with `cite`/`note`/`todo`/`a`/`b` recognized, `note` recovering forward, and
/// `max_span_bytes` at 64 KiB, so held output stays a sliding window at every size; nested
/// mode (`autoclose_on_any_tag` off) for `deep_nest`.
pub fn scaling_config(shape: Shape) -> kindaxml_stream::Config {
    use kindaxml_stream::{Config, Strategy};
    Config::default()
        .with_tags(["cite", "note", "todo", "a", "b"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap()
        .with_max_span_bytes(64 << 10)
        .unwrap()
        .with_autoclose_on_any_tag(shape != Shape::DeepNest)
}

/// Our configuration in every comparison with kindaxml: its defaults (`kindaxml_compat`),
/// `cite`/`note`/`todo` recognized, `note` and `todo` recovering forward.
pub fn compat_config() -> kindaxml_stream::Config {
    use kindaxml_stream::{Config, Strategy};
    Config::kindaxml_compat()
        .with_tags(["cite", "note", "todo"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap()
        .with_recovery("todo", Strategy::ForwardUntilTag)
        .unwrap()
}

/// The same configuration for kindaxml 0.1.0.
pub fn kindaxml_config() -> kindaxml::ParserConfig {
    kindaxml::ParserConfig {
        recognized_tags: ["cite", "note", "todo"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        per_tag_recovery: ["note", "todo"]
            .iter()
            .map(|k| (k.to_string(), kindaxml::RecoveryStrategy::ForwardUntilTag))
            .collect(),
        ..kindaxml::ParserConfig::default()
    }
}

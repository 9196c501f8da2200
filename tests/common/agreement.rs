//! The agreement-domain generator (SPEC §9), shared by `tests/differential.rs` and the
//! `differential` fuzz target: inputs and compat configurations on which none of the
//! deliberate deviations D1–D9 applies, plus normalizers that make kindaxml's output and
//! ours comparable.
//!
//! What the generator avoids, and why (each is a documented deviation or a kindaxml defect):
//! - D1: no whitespace right after `<` or `</` (kindaxml trims it and finds a tag).
//! - D2: no `/` in unquoted attribute values (kindaxml stops the value there).
//! - D3: tags stay far below `max_tag_bytes`.
//! - D4: a literal `<` in text is never followed by a letter, `/`+letter or `!`+`[` outside a
//!   well-formed tag (kindaxml would run to the next `>` and swallow what is between).
//! - D5: a tag name is always followed by whitespace, `>` or `/>`.
//! - D6: attributes are well formed (kindaxml stops at the first stray character).
//! - D7: recognized tags are written in their configured spelling; unknown names never
//!   collide with a recognized one up to case.
//! - D8: when any recognized tag recovers with `forward_until_tag`, the input has no newline
//!   (kindaxml stops that strategy at a newline).
//! - D9: no newline inside a tag, and an unfinished candidate only at the very end.
//! - kindaxml panics when a text run starts with a non-ASCII character: every text item
//!   starts with an ASCII character (non-ASCII follows it).
//!
//! Comparison: kindaxml orders a segment's annotations by creation and never merges
//! segments, so both documents are normalized to per-segment *multisets* of (tag, attrs)
//! with adjacent equal segments merged; markers compare as (pos, tag, attrs).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};

use kindaxml::{
    AttrValue as KAttr, ParseResult, ParserConfig, RecoveryStrategy as KStrat,
    StrayEndTagPolicy as KStray, UnknownMode as KUnknown,
};
use kindaxml_stream::{AttrValue, Config, Document, Strategy, StrayEndTagPolicy, UnknownMode};

/// A source of choices: a seeded RNG in tests, the fuzzer's bytes in the fuzz target.
pub trait Choose {
    /// Uniform-ish in `0..n` (n > 0).
    fn below(&mut self, n: usize) -> usize;
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    fn pick_str<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

type NAttrs = BTreeMap<String, Option<String>>;
type NAnn = (String, NAttrs);

#[derive(Debug, PartialEq)]
pub struct Normal {
    pub text: String,
    pub segments: Vec<(String, Vec<NAnn>)>,
    pub markers: Vec<(usize, NAnn)>,
}

fn push_seg(segs: &mut Vec<(String, Vec<NAnn>)>, text: &str, mut anns: Vec<NAnn>) {
    anns.sort();
    if let Some(last) = segs.last_mut() {
        if last.1 == anns {
            last.0.push_str(text);
            return;
        }
    }
    segs.push((text.to_string(), anns));
}

pub fn ours_normal(d: &Document) -> Normal {
    let conv = |a: &kindaxml_stream::Annotation| -> NAnn {
        let attrs = a
            .attrs()
            .iter()
            .map(|(n, v)| {
                (
                    n.to_string(),
                    match v {
                        AttrValue::Str(s) => Some(s.to_string()),
                        AttrValue::True => None,
                    },
                )
            })
            .collect();
        (a.tag().to_string(), attrs)
    };
    let mut segments = Vec::new();
    for s in d.segments() {
        push_seg(
            &mut segments,
            s.text(),
            s.annotations().iter().map(conv).collect(),
        );
    }
    Normal {
        text: d.text().to_string(),
        segments,
        markers: d
            .markers()
            .iter()
            .map(|m| (m.pos(), conv(m.annotation())))
            .collect(),
    }
}

pub fn theirs_normal(r: &ParseResult) -> Normal {
    let conv = |a: &kindaxml::Annotation| -> NAnn {
        let attrs = a
            .attrs
            .iter()
            .map(|(n, v)| {
                (
                    n.clone(),
                    match v {
                        KAttr::Str(s) => Some(s.clone()),
                        KAttr::Bool(_) => None,
                    },
                )
            })
            .collect();
        (a.tag.clone(), attrs)
    };
    let mut segments = Vec::new();
    for s in &r.segments {
        push_seg(
            &mut segments,
            &s.text,
            s.annotations.iter().map(conv).collect(),
        );
    }
    Normal {
        text: r.text.clone(),
        segments,
        markers: r
            .markers
            .iter()
            .map(|m| (m.pos, conv(&m.annotation)))
            .collect(),
    }
}

const RECOGNIZABLE: &[&str] = &[
    "cite", "note", "todo", "claim", "risk", "code", "Ref", "x.y",
];
const UNKNOWN: &[&str] = &["weird", "span", "q-z", "ns:tag", "b1"];
const STRATS: &[Strategy] = &[
    Strategy::RetroLine,
    Strategy::ForwardUntilTag,
    Strategy::ForwardUntilNewline,
    Strategy::ForwardNextToken,
    Strategy::Noop,
];

pub struct Gen {
    pub config: Config,
    pub kconfig: ParserConfig,
    pub recognized: Vec<&'static str>,
    pub newlines: bool,
}

pub fn gen_config<R: Choose>(rng: &mut R) -> Gen {
    let mut recognized: Vec<&'static str> = RECOGNIZABLE
        .iter()
        .copied()
        .filter(|_| rng.chance(45))
        .collect();
    if recognized.is_empty() {
        recognized.push("cite");
    }
    let mut per_tag: Vec<(&str, Strategy)> = Vec::new();
    for t in &recognized {
        if rng.chance(70) {
            per_tag.push((t, *rng.pick(STRATS)));
        }
    }
    let effective = |t: &str| {
        per_tag
            .iter()
            .find(|(n, _)| *n == t)
            .map_or(Strategy::RetroLine, |p| p.1)
    };
    let newlines = !recognized
        .iter()
        .any(|t| effective(t) == Strategy::ForwardUntilTag);
    let unknown = *rng.pick(&[
        UnknownMode::Strip,
        UnknownMode::Passthrough,
        UnknownMode::TreatAsText,
    ]);
    let any = rng.chance(75);
    let same = rng.chance(60);
    let trim = rng.chance(80);
    let case_sensitive = rng.chance(50);
    let stray = if rng.chance(50) {
        StrayEndTagPolicy::Drop
    } else {
        StrayEndTagPolicy::Passthrough
    };

    let mut config = Config::kindaxml_compat()
        .with_tags(&recognized)
        .unwrap()
        .with_unknown_mode(unknown)
        .with_autoclose_on_any_tag(any)
        .with_autoclose_on_same_tag(same)
        .with_trim_punctuation(trim)
        .with_case_sensitive_tags(case_sensitive)
        .unwrap()
        .with_stray_end_tag_policy(stray);
    for (t, s) in &per_tag {
        config = config.with_recovery(t, *s).unwrap();
    }
    let kstrat = |s: Strategy| match s {
        Strategy::RetroLine => KStrat::RetroLine,
        Strategy::ForwardUntilTag => KStrat::ForwardUntilTag,
        Strategy::ForwardUntilNewline => KStrat::ForwardUntilNewline,
        Strategy::ForwardNextToken => KStrat::ForwardNextToken,
        Strategy::Noop => KStrat::Noop,
        Strategy::RetroClaim => unreachable!("not in kindaxml"),
    };
    let kconfig = ParserConfig {
        recognized_tags: recognized
            .iter()
            .map(|s| s.to_string())
            .collect::<HashSet<_>>(),
        per_tag_recovery: per_tag
            .iter()
            .map(|(t, s)| (t.to_string(), kstrat(*s)))
            .collect::<HashMap<_, _>>(),
        unknown_mode: match unknown {
            UnknownMode::Strip => KUnknown::Strip,
            UnknownMode::Passthrough => KUnknown::Passthrough,
            UnknownMode::TreatAsText => KUnknown::TreatAsText,
        },
        autoclose_on_any_tag: any,
        autoclose_on_same_tag: same,
        trim_punctuation: trim,
        case_sensitive_tags: case_sensitive,
        stray_end_tag_policy: match stray {
            StrayEndTagPolicy::Drop => KStray::Drop,
            StrayEndTagPolicy::Passthrough => KStray::Passthrough,
        },
    };
    Gen {
        config,
        kconfig,
        recognized,
        newlines,
    }
}

/// Literal `<` that can never start a tag (D4-safe).
const LITERAL_LT: &[&str] = &[
    "<3 ", "<= ", "<<3", "</3 ", "<!x ", "<?y ", "<> ", "</> ", "1<2 ",
];
const NEWLINES: &[&str] = &["\n", "\n\n", "\r\n"];

const WORDS: &[&str] = &[
    "We",
    "shipped",
    "last",
    "week",
    "a",
    "the",
    "x",
    "1",
    "42",
    "héllo",
    "w日本",
    "i—j",
    "it's",
    "\"q\"",
    "e=mc2",
    "AT&T",
    "&amp;",
    "&",
    "a>b",
    "end.",
    "(see",
    "this)",
    "ok!",
    "why?",
    "semi;",
    "col:",
    "x,y",
    "Ünï",
    "d\u{3000}e",
];

pub fn gen_text<R: Choose>(rng: &mut R, g: &Gen, out: &mut String) {
    // Always starts with an ASCII character (kindaxml panics otherwise).
    let n = 1 + rng.below(4);
    for i in 0..n {
        let w = rng.pick_str(WORDS);
        if i == 0 && !w.as_bytes()[0].is_ascii() {
            out.push('z');
        }
        out.push_str(w);
        match rng.below(10) {
            0 => out.push_str(", "),
            1 => out.push_str(". "),
            2 if g.newlines => out.push('\n'),
            3 => {}
            _ => out.push(' '),
        }
    }
    if rng.chance(8) {
        // Literal `<` that can never start a tag (D4-safe).
        out.push_str(rng.pick_str(LITERAL_LT));
    }
}

pub fn gen_name<R: Choose>(rng: &mut R, g: &Gen) -> String {
    if rng.chance(75) {
        rng.pick(&g.recognized).to_string()
    } else {
        rng.pick(UNKNOWN).to_string()
    }
}

pub fn gen_attrs<R: Choose>(rng: &mut R, out: &mut String) {
    let n = rng.below(4);
    for i in 0..n {
        out.push_str(if rng.chance(90) { " " } else { "\u{3000}" });
        let name = *rng.pick(&["id", "src", "n", "data-x", "a:b", "k1"]);
        out.push_str(name);
        let broken_ok = i == n - 1;
        match rng.below(7) {
            0 => {}
            1 => out.push_str(&format!(
                "={}",
                rng.pick(&["1", "2", "x.y", "it's", "a=b", "日本", "q?", "-3"])
            )),
            2 => out.push_str(&format!(
                "=\"{}\"",
                rng.pick(&["1, 2", "a<b", "it's", "", "x / y", "&amp;", " sp "])
            )),
            3 => out.push_str(&format!(
                "='{}'",
                rng.pick(&["1", "say \"hi\"", "<", "a b"])
            )),
            4 => out.push_str(&format!(" = \"{}\"", rng.pick(&["v", "w x"]))),
            5 if broken_ok => out.push_str(&format!("=\"{}", rng.pick(&["1 2", "4 ok=yes", "x"]))),
            _ => out.push_str("=7"),
        }
    }
}

pub fn gen_input<R: Choose>(rng: &mut R, g: &Gen) -> String {
    let mut s = String::new();
    let n = 1 + rng.below(14);
    for _ in 0..n {
        match rng.below(12) {
            0..=3 => gen_text(rng, g, &mut s),
            4..=5 => {
                s.push('<');
                s.push_str(&gen_name(rng, g));
                gen_attrs(rng, &mut s);
                s.push('>');
            }
            6..=7 => {
                s.push_str("</");
                s.push_str(&gen_name(rng, g));
                if rng.chance(10) {
                    s.push_str(" junk");
                }
                s.push('>');
            }
            8 => {
                s.push('<');
                s.push_str(&gen_name(rng, g));
                gen_attrs(rng, &mut s);
                s.push_str(if rng.chance(50) { "/>" } else { " />" });
            }
            9 => {
                let body = *rng.pick(&["Use < and > freely", "a]b", "x]]y", "&lt;", "", "日本"]);
                s.push_str(&format!("<![CDATA[{body}]]>"));
            }
            10 if g.newlines => s.push_str(rng.pick_str(NEWLINES)),
            _ => s.push(' '),
        }
    }
    match rng.below(12) {
        0 => s.push_str(&format!("<{} id=1", rng.pick(&g.recognized))),
        1 => s.push_str("<![CDATA[tail <x>"),
        _ => {}
    }
    s
}

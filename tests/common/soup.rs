//! Random "soup" inputs built from every construct (broken tags and quotes, blank lines,
//! CDATA, references, `\r\n`, Unicode) and random configurations using every knob, tiny
//! limits included: shared by `tests/chunking.rs` and `tests/restart.rs`.
#![allow(dead_code)]

use super::Rng;
use kindaxml_stream::{
    Config, Declarations, DuplicateAttrs, EmptyElements, SelfClosing, Strategy, StrayEndTagPolicy,
    UnknownMode,
};

pub const PIECES: &[&str] = &[
    "<cite",
    "<note",
    "<todo",
    "<a",
    "<CITE",
    "</cite>",
    "</note>",
    "</a>",
    "</todo>",
    "<todo/>",
    "<cite id=1>",
    "<note>",
    "<a x='1'>",
    " id=",
    "=",
    "\"",
    "'",
    ">",
    "/>",
    "/",
    "<",
    "<<",
    "</",
    "<!",
    "<?x?>",
    "<![CDATA[",
    "]]>",
    "]",
    "]]",
    "&amp;",
    "&lt;",
    "&#x41;",
    "&#65;",
    "&#10;",
    "&",
    "&am",
    ";",
    "&#",
    "\n",
    "\n\n",
    "\n \n",
    "\r\n",
    "\r",
    " ",
    "  ",
    "\t",
    "word",
    "Claim",
    "x",
    ".",
    ",",
    "!",
    "(",
    ")",
    "日本",
    "é",
    "\u{3000}",
    "\u{a0}",
    "🎉",
    "<weird>",
    "</weird>",
    "<b/>",
    "`",
    "<john@x.org>",
    "<a/b>",
    "<cite src=https://x.io/a?b=1>",
    "a=b=\"c<d\"",
];

pub fn random_config(rng: &mut Rng) -> Config {
    let mut c = if rng.chance(50) {
        Config::default()
    } else {
        Config::kindaxml_compat()
    };
    let tags: Vec<&str> = ["cite", "note", "todo", "a"]
        .into_iter()
        .filter(|_| rng.chance(70))
        .collect();
    c = c.with_tags(tags.clone()).unwrap();
    for t in tags {
        if rng.chance(60) {
            c = c.with_recovery(t, *rng.pick(Strategy::ALL)).unwrap();
        }
    }
    if rng.chance(30) {
        c = c.with_default_recovery(*rng.pick(Strategy::ALL));
    }
    c = c
        .with_autoclose_on_any_tag(rng.chance(65))
        .with_autoclose_on_same_tag(rng.chance(50))
        .with_trim_punctuation(rng.chance(75))
        .with_case_sensitive_tags(rng.chance(50))
        .unwrap()
        .with_unknown_mode(*rng.pick(&[
            UnknownMode::Strip,
            UnknownMode::Passthrough,
            UnknownMode::TreatAsText,
        ]))
        .with_stray_end_tag_policy(
            *rng.pick(&[StrayEndTagPolicy::Drop, StrayEndTagPolicy::Passthrough]),
        )
        .with_decode_entities(rng.chance(60))
        .with_duplicate_attrs(*rng.pick(&[
            DuplicateAttrs::Last,
            DuplicateAttrs::First,
            DuplicateAttrs::All,
        ]));
    if rng.chance(50) {
        c = c.with_raw_tags(["think"]).unwrap();
        if rng.chance(50) {
            c = c.with_aliases([("thinking", "think")]).unwrap();
        }
    }
    for t in ["todo", "note"] {
        if rng.chance(30) {
            c = c
                .with_self_closing(
                    t,
                    *rng.pick(&[
                        SelfClosing::Marker,
                        SelfClosing::NextToken,
                        SelfClosing::UntilNewline,
                    ]),
                )
                .unwrap();
        }
    }
    if rng.chance(30) {
        c = c.with_empty_elements(EmptyElements::Marker);
    }
    c = c
        .with_markdown_code(rng.chance(60))
        .with_declarations(*rng.pick(&[Declarations::Text, Declarations::Drop]));
    if rng.chance(25) {
        c = c.with_max_tag_bytes(3 + rng.below(30)).unwrap();
    }
    if rng.chance(30) {
        c = c.with_max_span_bytes(1 + rng.below(40)).unwrap();
    }
    c
}

pub fn random_input(rng: &mut Rng, pieces: usize) -> String {
    let mut s = String::new();
    for _ in 0..pieces {
        s.push_str(rng.pick_str(PIECES));
    }
    s
}

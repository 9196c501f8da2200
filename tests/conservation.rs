//! Text conservation: in a lossless configuration (unknown and stray tags pass through,
//! entities off, declarations kept), every input byte is either in the output text or inside
//! the markup of a recognized tag. The markup is located with the source offsets the output
//! carries (annotations, markers, and the end tags recorded in `Close`), so this also checks
//! those offsets. `empty_elements: marker` keeps tags with empty spans visible.

mod common;

use std::collections::BTreeSet;

use common::{random_cuts, run_bytes, split_at, Rng};
use kindaxml_stream::{
    parse, Close, Config, EmptyElements, Event, SelfClosing, Strategy, StrayEndTagPolicy,
    StreamParser, UnknownMode,
};

const PIECES: &[&str] = &[
    "<cite",
    "<note",
    "<todo",
    "<a",
    "<think>",
    "</think>",
    "</cite>",
    "</note>",
    "</a>",
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
    "</",
    "<!",
    "<?x?>",
    "&amp;",
    "&",
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "word",
    ".",
    ",",
    "日本",
    "é",
    "\u{3000}",
    "<weird>",
    "</weird>",
    "<b/>",
    "`",
    "```\n",
    "<john@x.org>",
    "<a/b>",
    "<!-- c -->",
    "<CITE>",
    "x",
];

fn config(rng: &mut Rng) -> Config {
    let tags: Vec<&str> = ["cite", "note", "todo", "a"]
        .into_iter()
        .filter(|_| rng.chance(70))
        .collect();
    let mut c = Config::default()
        .with_tags(tags.clone())
        .unwrap()
        .with_unknown_mode(UnknownMode::Passthrough)
        .with_stray_end_tag_policy(StrayEndTagPolicy::Passthrough)
        .with_decode_entities(false)
        .with_empty_elements(EmptyElements::Marker)
        .with_autoclose_on_any_tag(rng.chance(60))
        .with_autoclose_on_same_tag(rng.chance(50))
        .with_trim_punctuation(rng.chance(50))
        .with_markdown_code(rng.chance(50))
        .with_case_sensitive_tags(rng.chance(50))
        .unwrap();
    for t in tags {
        c = c.with_recovery(t, *rng.pick(Strategy::ALL)).unwrap();
    }
    if rng.chance(50) {
        c = c.with_raw_tags(["think"]).unwrap();
    }
    if rng.chance(30) {
        c = c.with_self_closing("todo", SelfClosing::NextToken).unwrap();
    }
    if rng.chance(30) {
        c = c.with_max_depth(1 + rng.below(3)).unwrap();
    }
    if rng.chance(30) {
        c = c.with_max_span_bytes(1 + rng.below(20)).unwrap();
    }
    c
}

/// Source offsets where recognized markup starts, from the events (not the merged
/// document: canonical merging keeps only the first of two equal-valued annotations).
fn markup_starts(config: &Config, input: &str) -> BTreeSet<usize> {
    let mut set = BTreeSet::new();
    let mut p = StreamParser::new(config);
    let mut events: Vec<Event> = p.update(input).unwrap().collect();
    events.extend(p.finish().unwrap());
    let mut add = |a: &kindaxml_stream::Annotation| {
        set.insert(a.source_offset());
        match a.close() {
            Some(Close::EndTag { offset }) | Some(Close::Reopened { offset }) => {
                set.insert(offset);
            }
            _ => {}
        }
    };
    for e in &events {
        match e {
            Event::Text(s) => s.annotations().iter().for_each(&mut add),
            Event::Marker(m) => add(m.annotation()),
        }
    }
    set
}

fn expected_text(input: &str, starts: &BTreeSet<usize>) -> String {
    let b = input.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    for &s in starts {
        assert!(
            s >= i,
            "markup at {s} overlaps the previous one (ends {i}) in {input:?}"
        );
        assert_eq!(b[s], b'<', "offset {s} is not a `<` in {input:?}");
        out.extend_from_slice(&b[i..s]);
        let end = s
            + b[s..]
                .iter()
                .position(|&c| c == b'>')
                .expect("markup ends with >")
            + 1;
        i = end;
    }
    out.extend_from_slice(&b[i..]);
    String::from_utf8(out).unwrap()
}

#[test]
fn every_byte_is_text_or_recognized_markup() {
    let seed = common::seed(17);
    let mut rng = Rng::new(seed);
    for case in 0..common::cases(4000) {
        let config = config(&mut rng);
        let mut input = String::new();
        for _ in 0..1 + rng.below(24) {
            input.push_str(rng.pick_str(PIECES));
        }
        let doc = parse(&input, &config);
        let want = expected_text(&input, &markup_starts(&config, &input));
        assert_eq!(
            doc.text(),
            want,
            "case {case} seed {seed}: {input:?}\n{config:?}"
        );
        let k = 1 + rng.below(6);
        let cuts = random_cuts(&mut rng, input.len(), k);
        assert_eq!(run_bytes(&config, &split_at(input.as_bytes(), &cuts)), doc);
    }
}

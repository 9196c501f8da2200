//! Limits at their edges (SPEC §6; issue: reliability): huge nesting, huge attribute lists,
//! long lines — bounded time, identical one-shot and chunked.

mod common;

use std::time::{Duration, Instant};

use common::{random_cuts, run_bytes, split_at, Rng};
use kindaxml_stream::{parse, Config, Event, Strategy, StreamParser, DEFAULT_MAX_DEPTH};

fn nested() -> Config {
    Config::default()
        .with_tags(["a", "b"])
        .unwrap()
        .with_autoclose_on_any_tag(false)
        .with_default_recovery(Strategy::ForwardUntilTag)
}

fn bound() -> Duration {
    Duration::from_secs(if cfg!(debug_assertions) { 60 } else { 10 })
}

/// 10^6 opens in nested mode: no stack overflow, bounded memory (at most `max_depth` tags
/// are open; the rest are unrecognized markup), linear time.
#[test]
fn a_million_nested_opens() {
    let n = 1_000_000;
    let input = format!("{}x{}", "<a>".repeat(n), "</a>".repeat(n));
    let start = Instant::now();
    // Only max_depth acts here (the span limit would close the open tags after 1 MiB).
    let mut p = StreamParser::new(&nested().with_max_span_bytes(usize::MAX).unwrap());
    let mut text = 0usize;
    let mut anns = 0usize;
    for chunk in input.as_bytes().chunks(4096) {
        for e in p.update_bytes(chunk).unwrap() {
            if let Event::Text(s) = e {
                text += s.text().len();
                anns = anns.max(s.annotations().len());
            }
        }
    }
    for e in p.finish().unwrap() {
        if let Event::Text(s) = e {
            text += s.text().len();
            anns = anns.max(s.annotations().len());
        }
    }
    assert!(start.elapsed() < bound(), "{:?}", start.elapsed());
    // The innermost text carries exactly max_depth annotations; the start tags past the
    // depth were passed through as text (default unknown_mode), their end tags were stray
    // (dropped) — except the last max_depth, which closed the open ones.
    assert_eq!(anns, DEFAULT_MAX_DEPTH);
    assert_eq!(text, (n - DEFAULT_MAX_DEPTH) * 3 + 1);
}

#[test]
fn max_depth_is_chunk_invariant() {
    let config = nested().with_max_depth(7).unwrap();
    let mut rng = Rng::new(common::seed(3));
    let units = ["<a>", "<b>", "</a>", "</b>", "x", " ", "<a/>", "\n"];
    for _ in 0..200 {
        let mut input = String::new();
        for _ in 0..rng.below(80) {
            input.push_str(rng.pick_str(&units));
        }
        let want = parse(&input, &config);
        for _ in 0..4 {
            let k = 1 + rng.below(input.len().max(1));
            let cuts = random_cuts(&mut rng, input.len(), k);
            assert_eq!(
                run_bytes(&config, &split_at(input.as_bytes(), &cuts)),
                want,
                "{input:?}"
            );
        }
    }
}

/// 10^5 attributes in one tag (with `max_tag_bytes` raised to allow it): linear, every
/// duplicate policy, chunked like one-shot.
#[test]
fn a_hundred_thousand_attributes() {
    let n = 100_000;
    let mut tag = String::from("<cite");
    for i in 0..n {
        tag.push_str(&format!(" a{}={}", i % (n / 2), i));
    }
    tag.push_str(">x</cite>");
    let config = Config::default()
        .with_tags(["cite"])
        .unwrap()
        .with_max_tag_bytes(4 << 20)
        .unwrap();
    let start = Instant::now();
    let doc = parse(&tag, &config);
    assert!(start.elapsed() < bound(), "{:?}", start.elapsed());
    let attrs = doc.segments()[0].annotations()[0].attrs();
    assert_eq!(attrs.len(), n / 2, "duplicates keep the last value");
    assert_eq!(attrs.get("a7").and_then(|v| v.as_str()), Some("50007"));
    let all = parse(
        &tag,
        &config
            .clone()
            .with_duplicate_attrs(kindaxml_stream::DuplicateAttrs::All),
    );
    assert_eq!(all.segments()[0].annotations()[0].attrs().len(), n);
    let first = parse(
        &tag,
        &config
            .clone()
            .with_duplicate_attrs(kindaxml_stream::DuplicateAttrs::First),
    );
    assert_eq!(
        first.segments()[0].annotations()[0]
            .attrs()
            .get("a7")
            .and_then(|v| v.as_str()),
        Some("7")
    );
    let ones: Vec<usize> = (1..tag.len()).step_by(997).collect();
    assert_eq!(run_bytes(&config, &split_at(tag.as_bytes(), &ones)), doc);
    // The same tag is text under the default limit.
    let small = parse(&tag, &Config::default().with_tags(["cite"]).unwrap());
    assert!(small.text().starts_with("<cite a0=0"));
}

/// A long line with postfix citations: held output stays within max_span_bytes however long
/// the line is, and every byte comes out.
#[test]
fn a_long_line_stays_bounded() {
    let config = Config::default()
        .with_tags(["cite"])
        .unwrap()
        .with_max_span_bytes(64 << 10)
        .unwrap();
    let unit = "Claim number one is true and well supported <cite id=1>. ";
    let mut p = StreamParser::new(&config);
    let mut out = 0usize;
    let mut max_held = 0usize;
    let total = 16 << 20;
    let mut fed = 0usize;
    let block = unit.repeat(1000);
    while fed < total {
        for e in p.update(&block).unwrap() {
            if let Event::Text(s) = e {
                out += s.text().len();
            }
        }
        max_held = max_held.max(p.held_output_bytes());
        fed += block.len();
    }
    out += p
        .finish()
        .unwrap()
        .map(|e| {
            if let Event::Text(s) = e {
                s.text().len()
            } else {
                0
            }
        })
        .sum::<usize>();
    assert_eq!(out, fed / unit.len() * (unit.len() - "<cite id=1>".len()));
    assert!(max_held <= (64 << 10) + block.len(), "held {max_held}");
}

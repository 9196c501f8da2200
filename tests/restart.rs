//! Restart points (`StreamParser::is_restartable`, DESIGN.md decision 71): where a parser
//! says it is restartable, a new parser fed the rest of the input continues the document
//! exactly. The two runs' events, the second's output positions and source offsets shifted
//! by where it started, merge into `parse()` of the whole input: text, segments,
//! annotations (tag, attributes, source offset, span, how the tag closed) and markers.
//! `kxml --format count` relies on this to count the parts of a file at once.

mod common;

#[path = "../benches/corpus.rs"]
mod corpus;

#[path = "common/shifted.rs"]
mod shifted;

use common::soup::{random_config, random_input};
use common::{random_cuts, split_at, Rng};
use kindaxml_stream::{Config, Event, StreamParser};
use shifted::{whole, View};

/// Feeds `chunks`; returns the parser (not finished) and the events.
fn feed(config: &Config, chunks: &[&[u8]]) -> (StreamParser, Vec<Event>) {
    let mut p = StreamParser::new(config);
    let mut events = Vec::new();
    for c in chunks {
        events.extend(p.update_bytes(c).expect("valid UTF-8"));
    }
    (p, events)
}

/// If the parser that read `input[..k]` (cut at `cuts`, relative to the start) is
/// restartable, checks that a new parser continues the document from `k`. Returns whether
/// it was.
fn check_at(
    config: &Config,
    input: &str,
    want: &View,
    k: usize,
    cuts: &[usize],
    what: &str,
) -> bool {
    let bytes = input.as_bytes();
    let (p, head) = feed(config, &split_at(&bytes[..k], cuts));
    // The answer does not depend on how the prefix was split.
    let (one_shot, _) = feed(config, &[&bytes[..k]]);
    assert_eq!(
        p.is_restartable(),
        one_shot.is_restartable(),
        "{what}: at {k}, cut at {cuts:?}\ninput {input:?}\nconfig {config:?}"
    );
    if !p.is_restartable() {
        return false;
    }
    let emitted: usize = head
        .iter()
        .map(|e| match e {
            Event::Text(s) => s.text().len(),
            Event::Marker(_) => 0,
        })
        .sum();
    assert_eq!(
        emitted,
        p.output_len(),
        "{what}: restartable with output held back"
    );
    let mut tail_parser = StreamParser::new(config);
    let mut tail: Vec<Event> = tail_parser.update(&input[k..]).expect("update").collect();
    tail.extend(tail_parser.finish().expect("finish"));
    let mut got = View::default();
    got.push(&head, 0, 0);
    got.push(&tail, k, emitted);
    assert_eq!(
        &got, want,
        "{what}: restarted at {k}\ninput {input:?}\nconfig {config:?}"
    );
    true
}

/// Line starts of `input` (after each `\n`), the end excluded.
fn line_starts(input: &str) -> Vec<usize> {
    memchr::memchr_iter(b'\n', input.as_bytes())
        .map(|i| i + 1)
        .filter(|&k| k < input.len())
        .collect()
}

// (The data file names its configurations in the CLI's JSON, read with feature `serde`.)
#[cfg(feature = "serde")]
#[test]
fn restart_points_listed_in_the_data_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/cases/restart/points.txt"
    );
    let text = std::fs::read_to_string(path).expect("points.txt");
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let what = format!("points.txt:{}", i + 1);
        let (want, rest) = line.split_once(' ').expect("yes|no first");
        let want = match want {
            "yes" => true,
            "no" => false,
            _ => panic!("{what}: yes or no"),
        };
        let mut values =
            serde_json::Deserializer::from_str(rest.trim()).into_iter::<serde_json::Value>();
        let config = values.next().expect("config").expect("config JSON");
        let input = values.next().expect("input").expect("input JSON");
        let config = Config::from_json_value(&config).expect("config");
        let input = input.as_str().expect("input is a string").to_string();
        let bytes = input.as_bytes();
        // One-shot, then every 2-way split.
        for cut in std::iter::once(None).chain((0..=bytes.len()).map(Some)) {
            let cuts: Vec<usize> = cut.into_iter().collect();
            let (p, _) = feed(&config, &split_at(bytes, &cuts));
            assert_eq!(p.is_restartable(), want, "{what}: cut {cut:?} of {input:?}");
        }
        // And a "yes" continues the document (here with a line that closes what is open).
        let full = format!("{input}More <cite id=9>.</cite> </note> <todo/> text\n");
        let wanted = whole(&full, &config);
        assert_eq!(
            check_at(&config, &full, &wanted, input.len(), &[], &what),
            want,
            "{what}"
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} cases read");
}

#[test]
fn random_soup_restarts_exactly() {
    let seed = common::seed(71);
    let mut rng = Rng::new(seed);
    let (mut yes, mut no) = (0, 0);
    for case in 0..common::cases(4000) / 2 {
        let config = random_config(&mut rng);
        let n = 1 + rng.below(60);
        let input = random_input(&mut rng, n);
        let want = whole(&input, &config);
        // Line starts; for every fourth input every position (an output line can also
        // start after a decoded `&#10;` or a CDATA section).
        let points: Vec<usize> = if case % 4 == 0 {
            (1..input.len())
                .filter(|&k| input.is_char_boundary(k))
                .collect()
        } else {
            line_starts(&input)
        };
        for k in points {
            let cuts = if rng.chance(20) {
                (1..k).collect() // 1-byte chunks
            } else {
                let m = rng.below(4);
                random_cuts(&mut rng, k, m)
            };
            let what = format!("case {case} seed {seed}");
            if check_at(&config, &input, &want, k, &cuts, &what) {
                yes += 1;
            } else {
                no += 1;
            }
        }
    }
    eprintln!("restartable at {yes} points, not at {no}");
    // Both answers come up often (the check above is not vacuous).
    assert!(yes > 500 && no > 500, "restartable {yes}, not {no}");
}

#[test]
fn corpus_shapes_restart_exactly() {
    // `kxml --tags cite,note,todo`: the configuration `kxml --format count` is measured with.
    let config = Config::default()
        .with_tags(["cite", "note", "todo"])
        .unwrap();
    let mut rng = Rng::new(common::seed(72));
    for shape in corpus::Shape::ALL {
        let input = corpus::corpus(shape, 96 << 10, 1);
        let want = whole(&input, &config);
        let starts = line_starts(&input);
        let (mut yes, mut tried) = (0, 0);
        for _ in 0..12 {
            let Some(&k) = starts.get(rng.below(starts.len().max(1))) else {
                break;
            };
            let m = rng.below(8);
            let cuts = random_cuts(&mut rng, k, m);
            tried += 1;
            if check_at(&config, &input, &want, k, &cuts, shape.name()) {
                yes += 1;
            }
        }
        eprintln!("{}: {yes} of {tried} line starts restartable", shape.name());
        if matches!(
            shape,
            corpus::Shape::Prose | corpus::Shape::Dense | corpus::Shape::Plain
        ) {
            assert!(yes > 0, "{}: no restart point found", shape.name());
        }
    }
}

/// After a restart point, a new parser reports invalid UTF-8 at the same byte (its offset
/// counted from the restart), and in lossy mode continues the document as the parser that
/// read everything does.
#[test]
fn invalid_utf8_after_a_restart_point() {
    let config = Config::default().with_tags(["cite"]).unwrap();
    let input: &[u8] = b"We shipped <cite id=1>it</cite>.\nThen \xFF broke <cite id=2>.\n";
    let k = memchr::memchr(b'\n', input).unwrap() + 1;
    let bad = memchr::memchr(0xFF, input).unwrap();
    let error_of = |bytes: &[u8], lossy: bool| {
        let mut p = StreamParser::new(&config).with_lossy_utf8(lossy);
        let mut events = Vec::new();
        match p.update_bytes(bytes) {
            Ok(e) => events.extend(e),
            Err(e) => return Err(e),
        }
        match p.finish() {
            Ok(e) => events.extend(e),
            Err(e) => return Err(e),
        }
        Ok(events)
    };
    let (head_parser, head) = feed(&config, &[&input[..k]]);
    assert!(head_parser.is_restartable());
    // Strict: the same byte, counted from the whole input and from the restart point.
    assert_eq!(
        error_of(input, false).unwrap_err(),
        kindaxml_stream::Error::InvalidUtf8 { offset: bad as u64 }
    );
    assert_eq!(
        error_of(&input[k..], false).unwrap_err(),
        kindaxml_stream::Error::InvalidUtf8 {
            offset: (bad - k) as u64
        }
    );
    // Lossy: the replacement character in both, the same document.
    let mut want = View::default();
    want.push(&error_of(input, true).unwrap(), 0, 0);
    let mut got = View::default();
    got.push(&head, 0, 0);
    got.push(
        &error_of(&input[k..], true).unwrap(),
        k,
        head_parser.output_len(),
    );
    assert_eq!(got, want);
    assert!(want.segments.iter().any(|(t, _)| t.contains('\u{FFFD}')));
}

/// The canonical merge compares attributes as sets (their order aside), across a restart
/// point too: a segment that ends the first run and one that starts the second, carrying
/// `cite` with the same attributes in another order, are one segment (found by the
/// `restart` fuzz target, whose comparison then took the order into account).
#[test]
fn merge_across_a_restart_point_ignores_attribute_order() {
    // Without fences the point after `</cite>` is restartable: the output line has ended
    // (with `retro_claim`, the default preset's, it is not: a later cite on the same output
    // line could still fall back to this one's span).
    let config = Config::kindaxml_compat()
        .with_tags(["cite"])
        .unwrap()
        .with_markdown_code(false);
    let input = "<cite id=1 x=2>one\n</cite><cite x=2 id=1>two</cite>";
    let k = input.find("</cite>").unwrap() + "</cite>".len();
    let want = whole(input, &config);
    assert_eq!(want.segments.len(), 1, "{want:?}");
    assert_eq!(want.segments[0].0, "one\ntwo");
    assert!(check_at(&config, input, &want, k, &[], "attribute order"));
}

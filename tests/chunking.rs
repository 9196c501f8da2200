//! Chunk invariance on random inputs built from every construct, far outside the agreement
//! domain: broken tags and quotes, blank lines, CDATA cut anywhere, references, `\r\n`,
//! Unicode, tiny limits, every strategy and knob. For each input, merged events from random
//! chunkings (bytes split anywhere, and `&str` split at char boundaries) must equal `parse()`.
//!
//! `KXS_CASES` scales the number of inputs (default 4000), `KXS_SEED` changes the seed.

mod common;

use common::soup::{random_config, random_input, PIECES};
use common::{
    flat, random_cuts, run_bytes, run_bytes_dropping, run_str, split_at, to_char_cuts, Rng,
};
use kindaxml_stream::{parse, Config, Strategy, StrayEndTagPolicy};

fn check(config: &Config, input: &str, rng: &mut Rng, what: &str) {
    let want = parse(input, config);
    let bytes = input.as_bytes();
    for round in 0..4 {
        let k = 1 + rng.below(bytes.len().max(1));
        let cuts = random_cuts(rng, bytes.len(), k);
        let got = run_bytes(config, &split_at(bytes, &cuts));
        assert_eq!(
            got, want,
            "{what}: bytes round {round} cuts {cuts:?}\ninput {input:?}\nconfig {config:?}"
        );
        let ccuts = to_char_cuts(input, &cuts);
        let parts = split_at(bytes, &ccuts);
        let strs: Vec<&str> = parts
            .iter()
            .map(|p| std::str::from_utf8(p).unwrap())
            .collect();
        let got = run_str(config, &strs);
        assert_eq!(
            got, want,
            "{what}: str round {round} cuts {ccuts:?}\ninput {input:?}\nconfig {config:?}"
        );
    }
    let ones: Vec<usize> = (1..bytes.len()).collect();
    let got = run_bytes(config, &split_at(bytes, &ones));
    assert_eq!(
        got, want,
        "{what}: 1-byte chunks\ninput {input:?}\nconfig {config:?}"
    );
    // Events dropped as they come (the parser then reuses its buffers).
    let k = 1 + rng.below(bytes.len().max(1));
    let cuts = random_cuts(rng, bytes.len(), k);
    for (how, parts) in [
        ("random", split_at(bytes, &cuts)),
        ("1-byte", split_at(bytes, &ones)),
    ] {
        assert!(
            run_bytes_dropping(config, &parts) == flat(&want),
            "{what}: {how} chunks, events dropped\ninput {input:?}\nconfig {config:?}"
        );
    }
}

#[test]
fn random_soup_is_chunk_invariant() {
    let seed = common::seed(7);
    let mut rng = Rng::new(seed);
    for case in 0..common::cases(4000) {
        let config = random_config(&mut rng);
        let n = 1 + rng.below(30);
        let input = random_input(&mut rng, n);
        check(
            &config,
            &input,
            &mut rng,
            &format!("case {case} seed {seed}"),
        );
    }
}

#[test]
fn large_inputs_are_chunk_invariant() {
    let seed = common::seed(11);
    let mut rng = Rng::new(seed);
    for case in 0..common::cases(4000) / 200 {
        let config = random_config(&mut rng);
        // 64–128 KiB: one-shot and few-cut runs make emissions past the adoption size.
        let target = (64 << 10) + rng.below(64 << 10);
        let mut input = String::new();
        while input.len() < target {
            input.push_str(rng.pick_str(PIECES));
        }
        let want = parse(&input, &config);
        let bytes = input.as_bytes();
        // Many cuts (small emissions, copied out) and a few (emissions of many KiB, which
        // take the parser's text buffer over, with text before and after them in it).
        for round in 0..6 {
            let k = if round < 3 {
                1 + rng.below(bytes.len() / 2)
            } else {
                1 + rng.below(4)
            };
            let cuts = random_cuts(&mut rng, bytes.len(), k);
            let got = run_bytes(&config, &split_at(bytes, &cuts));
            assert!(
                got.text() == want.text(),
                "large case {case} seed {seed}: text differs ({} cuts)",
                cuts.len()
            );
            assert_eq!(
                got,
                want,
                "large case {case} seed {seed} ({} bytes, {} cuts)",
                bytes.len(),
                cuts.len()
            );
        }
    }
}

/// `parse()` feeds inputs past 64 KiB in slices, emitting after a slice only when spans or
/// markers wait (long plain stretches wait for one emission at the end). Long plain text
/// with sparse tags, tags open across slice boundaries and multibyte characters at them:
/// the document is that of any chunking.
#[test]
fn long_inputs_parse_in_slices_like_any_chunking() {
    let seed = common::seed(13);
    let mut rng = Rng::new(seed);
    let para = "Plain prose with naïve ünïcödé — 世界 and more words.\n";
    for case in 0..common::cases(4000) / 500 {
        let config = random_config(&mut rng);
        let mut input = String::new();
        // Plain stretches of 20–150 KiB between a few constructs, so some slices have
        // nothing to place and others end inside an open tag.
        for _ in 0..4 {
            let target = input.len() + (20 << 10) + rng.below(130 << 10);
            while input.len() < target {
                input.push_str(para);
            }
            input.push_str(rng.pick_str(PIECES));
            input.push_str(rng.pick_str(PIECES));
        }
        let want = parse(&input, &config);
        let bytes = input.as_bytes();
        for round in 0..3 {
            let k = 1 + rng.below(if round == 0 { 3 } else { 200 });
            let cuts = random_cuts(&mut rng, bytes.len(), k);
            let got = run_bytes(&config, &split_at(bytes, &cuts));
            assert!(
                got.text() == want.text(),
                "case {case} seed {seed}: text differs"
            );
            assert_eq!(got, want, "case {case} seed {seed} ({} cuts)", cuts.len());
        }
        let whole = run_str(&config, &[input.as_str()]);
        assert_eq!(whole, want, "case {case} seed {seed}: one update");
    }
}

/// Invalid UTF-8 is an error at the same offset however the bytes are split, and the valid
/// text before it is not lost. The error comes from the call with the byte that shows it
/// (the space after the truncated sequence) or a later one: a chunk that waited unparsed with
/// the rest of its line is validated when the wait ends, at the latest by `finish`.
#[test]
fn invalid_utf8_same_offset_under_any_split() {
    use kindaxml_stream::{Document, Error, StreamParser};
    let config = Config::default().with_tags(["cite"]).unwrap();
    let input: &[u8] = b"ok <cite id=1>\xe6\x97\xa5 then \xe6\x97 bad";
    // The first byte of the truncated sequence before " bad".
    let bad = input.windows(6).position(|w| w == b"\xe6\x97 bad").unwrap();
    let mut late = 0;
    for i in 0..=input.len() {
        for j in i..=input.len() {
            let mut p = StreamParser::new(&config);
            let mut d = Document::new();
            let mut err = None;
            for (end, part) in [
                (i, &input[..i]),
                (j, &input[i..j]),
                (input.len(), &input[j..]),
            ] {
                match p.update_bytes(part) {
                    Ok(ev) => d.extend(ev),
                    Err(e) => {
                        assert!(
                            end > bad + 2,
                            "split {i} {j}: before the byte that shows it"
                        );
                        err = Some(e);
                        break;
                    }
                }
            }
            if err.is_none() {
                err = p.finish().err();
                late += 1;
            }
            assert_eq!(
                err,
                Some(Error::InvalidUtf8 { offset: bad as u64 }),
                "split {i} {j}"
            );
            assert!(matches!(p.update("more"), Err(Error::Poisoned { .. })));
            d.extend(p.finish().expect("finish after an error ends the input"));
            let valid = std::str::from_utf8(&input[..bad]).unwrap();
            assert_eq!(d, parse(valid, &config), "split {i} {j}");
            assert_eq!(p.finish().err(), Some(Error::Finished));
        }
    }
    // Some splits leave the bad bytes waiting until the end.
    assert!(late > 0);
}

/// The offset of an invalid byte counts the input of every earlier call, text chunks
/// (`update`) and byte chunks alike, whichever call reports it.
#[test]
fn invalid_utf8_offset_counts_text_chunks() {
    use kindaxml_stream::{Error, StreamParser};
    // The error of the call, or else of `finish`.
    fn reported(p: &mut StreamParser, last: &[u8]) -> Option<Error> {
        if let Err(e) = p.update_bytes(last).map(|ev| ev.for_each(drop)) {
            return Some(e);
        }
        p.finish().err()
    }
    let config = Config::default().with_tags(["cite"]).unwrap();
    let mut p = StreamParser::new(&config);
    p.update("ab <cite>x</cite> ").unwrap().for_each(drop);
    p.update_bytes(b"cd \xe6\x97").unwrap().for_each(drop);
    p.update("").unwrap().for_each(drop);
    // 18 bytes of text, then "cd " and the two bytes of the unfinished character.
    assert_eq!(
        reported(&mut p, b" e"),
        Some(Error::InvalidUtf8 { offset: 21 })
    );
    let mut q = StreamParser::new(&config);
    for c in ["ab", " <ci", "te>x</cite> "] {
        q.update(c).unwrap().for_each(drop);
    }
    assert_eq!(
        reported(&mut q, b"\xff"),
        Some(Error::InvalidUtf8 { offset: 18 })
    );
}

/// `Annotation::span()` is exactly the output range of the text events that carry the
/// annotation (contiguous), and `None` for markers and for annotations on no text.
#[test]
fn annotation_span_matches_the_events() {
    use kindaxml_stream::{Annotation, Event, StreamParser};
    let seed = common::seed(23);
    let mut rng = Rng::new(seed);
    for case in 0..common::cases(4000) / 2 {
        let config = random_config(&mut rng);
        let n = 1 + rng.below(30);
        let input = random_input(&mut rng, n);
        let mut p = StreamParser::new(&config);
        let mut events: Vec<Event> = Vec::new();
        let bytes = input.as_bytes();
        let k = 1 + rng.below(bytes.len().max(1));
        for part in split_at(bytes, &random_cuts(&mut rng, bytes.len(), k)) {
            events.extend(p.update_bytes(part).unwrap());
        }
        events.extend(p.finish().unwrap());
        // Group ranges by annotation identity (source offset + tag + close + span).
        let mut seen: Vec<(Annotation, usize, usize)> = Vec::new();
        for e in &events {
            match e {
                Event::Text(s) => {
                    for a in s.annotations() {
                        match seen.iter_mut().find(|(b, _, _)| b == a) {
                            Some((_, _, end)) => {
                                assert_eq!(
                                    *end,
                                    s.start(),
                                    "case {case}: span of {a:?} not contiguous in {input:?}"
                                );
                                *end = s.end();
                            }
                            None => seen.push((a.clone(), s.start(), s.end())),
                        }
                    }
                }
                Event::Marker(m) => assert!(m.annotation().span().is_none()),
            }
        }
        for (a, start, end) in seen {
            assert_eq!(
                a.span(),
                Some(start..end),
                "case {case} seed {seed}: {input:?}"
            );
        }
    }
}

/// A tag that arrives whole in one chunk is lexed and taken straight from the chunk
/// (DESIGN.md, decision 51); cut right after its `<`, it goes through the tokenizer's states
/// instead, and cut after a few of its chars, the direct lexer hands an unfinished candidate
/// to them. Every candidate of up to four chars from an alphabet with a member of every
/// class the tag lexer tells apart (letters, name chars, `/`, `=`, both quotes, `>`, `<`,
/// blanks, newlines, non-ASCII letters and spaces, entity and declaration starts), between
/// text and an end tag, gives the same document all three ways, in configurations that
/// recognize, strip or pass through tags, take raw content, nest, or allow 3-byte
/// candidates.
#[test]
fn a_tag_whole_in_a_chunk_equals_the_same_tag_cut() {
    const ALPHABET: &[&str] = &[
        "a", "T", "1", "-", "/", " ", "=", "\"", "'", ">", "<", "\n", "é", "\u{3000}", "&", "!",
    ];
    let configs = [
        Config::kindaxml_compat().with_tags(["a", "t"]).unwrap(),
        Config::default()
            .with_tags(["a", "ta"])
            .unwrap()
            .with_raw_tags(["t"])
            .unwrap()
            .with_recovery("a", Strategy::ForwardUntilTag)
            .unwrap()
            .with_stray_end_tag_policy(StrayEndTagPolicy::Passthrough),
        Config::default()
            .with_tags(["a", "t"])
            .unwrap()
            .with_autoclose_on_any_tag(false)
            .with_max_tag_bytes(3)
            .unwrap(),
    ];
    let mut words = vec![String::new()];
    let mut start = 0;
    for _ in 0..4 {
        let end = words.len();
        for k in start..end {
            for c in ALPHABET {
                let w = format!("{}{c}", words[k]);
                words.push(w);
            }
        }
        start = end;
    }
    let mut checked = 0;
    for config in &configs {
        for w in &words {
            let (head, tail) = ("x. <", format!("{w} y</a> z"));
            let input = format!("{head}{tail}");
            let whole = parse(&input, config);
            let after_lt = run_str(config, &[head, &tail]);
            assert_eq!(whole, after_lt, "cut after `<`: {input:?} {config:?}");
            let mid = format!("{head}{w}");
            let inside = run_str(config, &[&mid, &tail[w.len()..]]);
            assert_eq!(whole, inside, "cut after the candidate's chars: {input:?}");
            checked += 1;
        }
    }
    assert_eq!(checked, 3 * (1 + 16 + 256 + 4096 + 65536));
}

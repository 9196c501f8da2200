//! Arbitrary bytes, an arbitrary configuration and split points taken from the input: the
//! parser never panics, and the merged events of the chunked run equal `parse()` of the whole
//! input — for invalid UTF-8, the same typed error at the same offset, with the valid text
//! before it kept. Valid input also runs as `&str` chunks (the cuts moved to char boundaries).
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{
    parse, Config, Declarations, Document, DuplicateAttrs, EmptyElements, Error, SelfClosing,
    Strategy, StrayEndTagPolicy, StreamParser, UnknownMode,
};
use libfuzzer_sys::fuzz_target;

const TAGS: [&str; 5] = ["cite", "note", "todo", "a", "think"];

fn config(u: &mut Unstructured<'_>) -> arbitrary::Result<Config> {
    let mut c = if bool::arbitrary(u)? {
        Config::default()
    } else {
        Config::kindaxml_compat()
    };
    let mut tags = Vec::new();
    for t in TAGS {
        if bool::arbitrary(u)? {
            tags.push(t);
        }
    }
    c = c
        .with_tags(&tags)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    for t in TAGS {
        if u.ratio(1, 3)? {
            c = c
                .with_recovery(t, *u.choose(Strategy::ALL)?)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    if bool::arbitrary(u)? {
        c = c.with_default_recovery(*u.choose(Strategy::ALL)?);
    }
    if bool::arbitrary(u)? {
        c = c
            .with_raw_tags(["think"])
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        if bool::arbitrary(u)? {
            c = c
                .with_aliases([("thinking", "think")])
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    for t in ["todo", "note"] {
        if u.ratio(1, 4)? {
            let b = *u.choose(&[
                SelfClosing::Marker,
                SelfClosing::NextToken,
                SelfClosing::UntilNewline,
            ])?;
            c = c
                .with_self_closing(t, b)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
    }
    c = c
        .with_autoclose_on_any_tag(bool::arbitrary(u)?)
        .with_autoclose_on_same_tag(bool::arbitrary(u)?)
        .with_trim_punctuation(bool::arbitrary(u)?)
        .with_unknown_mode(*u.choose(&[
            UnknownMode::Strip,
            UnknownMode::Passthrough,
            UnknownMode::TreatAsText,
        ])?)
        .with_stray_end_tag_policy(
            *u.choose(&[StrayEndTagPolicy::Drop, StrayEndTagPolicy::Passthrough])?,
        )
        .with_decode_entities(bool::arbitrary(u)?)
        .with_markdown_code(bool::arbitrary(u)?)
        .with_declarations(*u.choose(&[Declarations::Text, Declarations::Drop])?)
        .with_empty_elements(*u.choose(&[EmptyElements::Drop, EmptyElements::Marker])?)
        .with_duplicate_attrs(*u.choose(&[
            DuplicateAttrs::Last,
            DuplicateAttrs::First,
            DuplicateAttrs::All,
        ])?);
    c = c
        .with_case_sensitive_tags(bool::arbitrary(u)?)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    if u.ratio(1, 3)? {
        c = c
            .with_max_tag_bytes(u.int_in_range(1..=64)?)
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    }
    if u.ratio(1, 3)? {
        c = c
            .with_max_span_bytes(u.int_in_range(1..=64)?)
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    }
    Ok(c)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(config) = config(&mut u) else { return };
    let Ok(n_cuts) = u.int_in_range(0u8..=12) else {
        return;
    };
    let mut cuts = Vec::new();
    for _ in 0..n_cuts {
        let Ok(c) = u16::arbitrary(&mut u) else { break };
        cuts.push(c as usize);
    }
    let input = u.take_rest();
    let mut cuts: Vec<usize> = cuts
        .into_iter()
        .map(|c| {
            if input.is_empty() {
                0
            } else {
                c % (input.len() + 1)
            }
        })
        .collect();
    cuts.sort_unstable();

    // One shot (the valid prefix if the input is not UTF-8).
    let (valid, want_err) = match std::str::from_utf8(input) {
        Ok(s) => (s, None),
        Err(e) => {
            let off = e.valid_up_to();
            let err = match e.error_len() {
                Some(_) => Error::InvalidUtf8 { offset: off as u64 },
                None => Error::TruncatedUtf8 { offset: off as u64 },
            };
            (std::str::from_utf8(&input[..off]).unwrap_or(""), Some(err))
        }
    };
    let want = parse(valid, &config);

    let mut p = StreamParser::new(&config);
    let mut doc = Document::new();
    let mut got_err = None;
    let mut last = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        match p.update_bytes(&input[last..c]) {
            Ok(ev) => doc.extend(ev),
            Err(e) => {
                got_err = Some(e);
                break;
            }
        }
        last = c;
    }
    let err = match p.finish() {
        Ok(ev) => {
            doc.extend(ev);
            None
        }
        Err(e) => Some(e),
    };
    if let Some(e) = err {
        got_err.get_or_insert(e);
        doc.extend(p.finish().expect("a second finish ends the input"));
    }
    assert_eq!(got_err, want_err);
    assert_eq!(doc, want);

    // The same cuts moved to char boundaries, fed as `&str` (`update`).
    if want_err.is_none() {
        let mut p = StreamParser::new(&config);
        let mut doc = Document::new();
        let mut last = 0;
        for &c in cuts.iter().chain(std::iter::once(&valid.len())) {
            let mut c = c.max(last);
            while !valid.is_char_boundary(c) {
                c -= 1;
            }
            let c = c.max(last);
            doc.extend(p.update(&valid[last..c]).expect("update"));
            last = c;
        }
        doc.extend(p.finish().expect("finish"));
        assert_eq!(doc, want);
    }
});

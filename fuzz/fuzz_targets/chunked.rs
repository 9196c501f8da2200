//! Arbitrary bytes, an arbitrary configuration and split points taken from the input: the
//! parser never panics, and the merged events of the chunked run equal `parse()` of the whole
//! input — for invalid UTF-8, the same typed error at the same offset, with the valid text
//! before it kept. Valid input also runs as `&str` chunks (the cuts moved to char boundaries).
//! Both documents, rebuilt by the benchmarks' floor, stay the same.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{parse, Document, Error, StreamParser};
use libfuzzer_sys::fuzz_target;

#[path = "common/config.rs"]
mod config;
use config::config;

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
    // The benchmarks' floor (`Document::rebuilt`, DESIGN.md decision 115) builds the same
    // document, from `parse()`'s and from the stream's (whose segments share lists of
    // annotations where text streamed inside nested tags).
    assert_eq!(doc.len(), want.len());
    for d in [&want, &doc] {
        let floor = d.rebuilt();
        assert_eq!(&floor, d);
        assert_eq!(floor.len(), d.len());
    }

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

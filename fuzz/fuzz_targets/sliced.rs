//! Inputs past `parse()`'s 64 KiB slices, which the other targets (inputs of at most a few
//! KiB) never reach: the fuzzer's text, repeated to 64–192 KiB, under an arbitrary
//! configuration. `parse()` feeds it in slices and emits after the ones that leave spans
//! or markers to place; the result must equal
//! - the whole text in one `update` (sliced the same way, emitting after every slice),
//! - `&str` chunks of one size taken from the input (never a slice: chunks are at most
//!   16 KiB), cut at char boundaries,
//! - byte chunks of pseudo-random sizes around that size (seeded from the input), which
//!   split characters.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{parse, Document, StreamParser};
use libfuzzer_sys::fuzz_target;

#[path = "common/config.rs"]
mod config;
use config::config;

/// `parse()`'s slice (`FEED_SLICE` in `src/parser.rs`).
const SLICE: usize = 64 << 10;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(config) = config(&mut u) else { return };
    let (Ok(extra), Ok(chunk), Ok(seed)) = (
        u.int_in_range(0..=2 * SLICE),
        u.int_in_range(1usize..=16 << 10),
        u64::arbitrary(&mut u),
    ) else {
        return;
    };
    let unit = String::from_utf8_lossy(u.take_rest()).into_owned();
    if unit.is_empty() {
        return;
    }
    let len = SLICE + extra;
    let mut input = String::with_capacity(len + unit.len());
    while input.len() < len {
        input.push_str(&unit);
    }
    let mut end = len;
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    input.truncate(end);

    let want = parse(&input, &config);

    let mut p = StreamParser::new(&config);
    let mut doc: Document = p.update(&input).expect("update").collect();
    doc.extend(p.finish().expect("finish"));
    assert_eq!(doc, want, "one update");

    let mut p = StreamParser::new(&config);
    let mut doc = Document::new();
    let mut rest = input.as_str();
    while !rest.is_empty() {
        let mut c = chunk.min(rest.len());
        while !rest.is_char_boundary(c) {
            c += 1;
        }
        let (head, tail) = rest.split_at(c);
        doc.extend(p.update(head).expect("update"));
        rest = tail;
    }
    doc.extend(p.finish().expect("finish"));
    assert_eq!(doc, want, "str chunks of {chunk}");

    let mut p = StreamParser::new(&config);
    let mut doc = Document::new();
    let mut rest = input.as_bytes();
    let mut x = seed | 1;
    while !rest.is_empty() {
        // xorshift64: sizes from 1 to twice `chunk`.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let c = (1 + (x % (2 * chunk as u64)) as usize).min(rest.len());
        let (head, tail) = rest.split_at(c);
        doc.extend(p.update_bytes(head).expect("update_bytes"));
        rest = tail;
    }
    doc.extend(p.finish().expect("finish"));
    assert_eq!(doc, want, "byte chunks around {chunk}");
});

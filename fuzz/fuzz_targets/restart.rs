//! Restart points: wherever a parser that read a prefix of the input (ending at a line
//! start, or anywhere in a short input) says `is_restartable()`, a new parser fed the rest continues the document exactly
//! (`tests/restart.rs` checks the same on generated inputs). The two runs' events, the
//! second's positions shifted, merge into `parse()` of the whole input: text, annotations
//! (tag, attributes, source offset, span, how the tag closed) and markers.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{Event, StreamParser};
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/shifted.rs"]
mod shifted;
use shifted::{whole, View};

#[path = "common/config.rs"]
mod config;
use config::config;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(config) = config(&mut u) else { return };
    let Ok(cut_seed) = u16::arbitrary(&mut u) else {
        return;
    };
    let Ok(input) = std::str::from_utf8(u.take_rest()) else {
        return;
    };
    let want = whole(input, &config);
    // The first 8 line starts; in a short input every position (an output line can also
    // start after a decoded `&#10;` or a CDATA section).
    let starts: Vec<usize> = if input.len() <= 64 {
        (1..input.len())
            .filter(|&k| input.is_char_boundary(k))
            .collect()
    } else {
        memchr::memchr_iter(b'\n', input.as_bytes())
            .map(|i| i + 1)
            .filter(|&k| k < input.len())
            .take(8)
            .collect()
    };
    for k in starts {
        // The prefix in two chunks, cut where the data says.
        let c = (cut_seed as usize) % (k + 1);
        let mut p = StreamParser::new(&config);
        let mut head: Vec<Event> = p
            .update_bytes(&input.as_bytes()[..c])
            .expect("utf-8")
            .collect();
        head.extend(p.update_bytes(&input.as_bytes()[c..k]).expect("utf-8"));
        if !p.is_restartable() {
            continue;
        }
        let out = p.output_len();
        let mut q = StreamParser::new(&config);
        let mut tail: Vec<Event> = q.update(&input[k..]).expect("update").collect();
        tail.extend(q.finish().expect("finish"));
        let mut got = View::default();
        got.push(&head, 0, 0);
        got.push(&tail, k, out);
        assert_eq!(got, want, "restarted at {k}");
    }
});

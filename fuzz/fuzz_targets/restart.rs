//! Restart points: wherever a parser that read a prefix of the input ending at a line
//! start says `is_restartable()`, a new parser fed the rest continues the document exactly
//! (`tests/restart.rs` checks the same on generated inputs). The two runs' events, the
//! second's positions shifted, merge into `parse()` of the whole input: text, annotations
//! (tag, attributes, source offset, span, how the tag closed) and markers.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use kindaxml_stream::{parse, Annotation, Close, Event, StreamParser};
use libfuzzer_sys::fuzz_target;

#[path = "common/config.rs"]
mod config;
use config::config;

/// Tag, attributes, source offset, span and how the tag closed (shifted by `src` / `out`).
type Ann = (String, String, usize, Option<(usize, usize)>, String);
type Segs = Vec<(String, Vec<Ann>)>;
type Marks = Vec<(usize, Ann)>;

fn ann(a: &Annotation, src: usize, out: usize) -> Ann {
    let close = match a.close() {
        Some(Close::EndTag { offset }) => format!("end tag at {}", offset + src),
        Some(Close::Reopened { offset }) => format!("reopened at {}", offset + src),
        Some(Close::AutoClosed { offset }) => format!("autoclosed at {}", offset + src),
        other => format!("{other:?} {:?}", a.strategy()),
    };
    (
        a.tag().to_string(),
        format!("{:?}", a.attrs()),
        a.source_offset() + src,
        a.span().map(|r| (r.start + out, r.end + out)),
        close,
    )
}

/// Appends `events`, positions shifted, merging neighbours with equal tags and attributes.
fn push(segs: &mut Segs, marks: &mut Marks, events: &[Event], src: usize, out: usize) {
    for e in events {
        match e {
            Event::Text(s) => {
                let anns: Vec<Ann> = s.annotations().iter().map(|a| ann(a, src, out)).collect();
                if let Some((text, last)) = segs.last_mut() {
                    let same = last.len() == anns.len()
                        && last
                            .iter()
                            .zip(&anns)
                            .all(|(x, y)| x.0 == y.0 && x.1 == y.1);
                    if same {
                        text.push_str(s.text());
                        continue;
                    }
                }
                segs.push((s.text().to_string(), anns));
            }
            Event::Marker(m) => marks.push((m.pos() + out, ann(m.annotation(), src, out))),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(config) = config(&mut u) else { return };
    let Ok(cut_seed) = u16::arbitrary(&mut u) else {
        return;
    };
    let Ok(input) = std::str::from_utf8(u.take_rest()) else {
        return;
    };
    let doc = parse(input, &config);
    let mut want_segs: Segs = Vec::new();
    let mut want_marks: Marks = Vec::new();
    let all: Vec<Event> = doc
        .segments()
        .iter()
        .cloned()
        .map(Event::Text)
        .chain(doc.markers().iter().cloned().map(Event::Marker))
        .collect();
    push(&mut want_segs, &mut want_marks, &all, 0, 0);
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
        let (mut segs, mut marks) = (Vec::new(), Vec::new());
        push(&mut segs, &mut marks, &head, 0, 0);
        push(&mut segs, &mut marks, &tail, k, out);
        assert_eq!(segs, want_segs, "restarted at {k}");
        assert_eq!(marks, want_marks, "restarted at {k}");
    }
});

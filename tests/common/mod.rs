//! Shared test helpers: a seeded RNG, chunked feeding, and document comparison.
#![allow(dead_code)]

pub mod soup;

use kindaxml_stream::{parse, Annotation, Config, Document, Event, Marker, StreamParser};

/// SplitMix64: small, seeded, good enough for test-case generation.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn pick_str<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Seed from the environment (`KXS_SEED`), else `default`.
pub fn seed(default: u64) -> u64 {
    std::env::var("KXS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Case count from the environment (`KXS_CASES`), else `default`.
pub fn cases(default: usize) -> usize {
    std::env::var("KXS_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Checks the event stream is well formed while merging it: text events are non-empty and
/// contiguous (each starts where the output so far ends), markers come in position order and
/// never before text already emitted past them.
#[derive(Default)]
pub struct Checked {
    pub doc: Document,
    out_len: usize,
    last_marker: usize,
}

impl Checked {
    pub fn push(&mut self, e: Event) {
        match &e {
            Event::Text(s) => {
                assert!(!s.text().is_empty(), "empty text event at {}", s.start());
                assert_eq!(s.start(), self.out_len, "text event not contiguous: {s:?}");
                self.out_len = s.end();
            }
            Event::Marker(m) => {
                assert_eq!(
                    m.pos(),
                    self.out_len,
                    "marker not at the current output position: {m:?}"
                );
                assert!(m.pos() >= self.last_marker);
                self.last_marker = m.pos();
            }
        }
        self.doc.push(e);
    }
}

/// Feeds `chunks` as `&str` and merges every event into a document.
pub fn run_str(config: &Config, chunks: &[&str]) -> Document {
    let mut p = StreamParser::new(config);
    let mut d = Checked::default();
    for c in chunks {
        p.update(c).expect("update").for_each(|e| d.push(e));
    }
    p.finish().expect("finish").for_each(|e| d.push(e));
    d.doc
}

/// Feeds `chunks` as bytes (they may split characters).
pub fn run_bytes(config: &Config, chunks: &[&[u8]]) -> Document {
    let mut p = StreamParser::new(config);
    let mut d = Checked::default();
    for c in chunks {
        p.update_bytes(c)
            .expect("update_bytes")
            .for_each(|e| d.push(e));
    }
    p.finish().expect("finish").for_each(|e| d.push(e));
    d.doc
}

/// A document as plain values: merged text runs with their annotations, and the markers.
pub type Flat = (Vec<(String, Vec<Annotation>)>, Vec<Marker>);

/// `doc` as plain values.
pub fn flat(doc: &Document) -> Flat {
    let runs = doc
        .segments()
        .iter()
        .map(|s| (s.text().to_string(), s.annotations().to_vec()))
        .collect();
    (runs, doc.markers().to_vec())
}

/// Feeds `chunks` as bytes and reads every event the moment it comes, keeping only copies
/// of its values and dropping it before the next update, as `kxml` does. Short emissions
/// then share the parser's pooled buffer, rewritten by the next one (DESIGN.md, decision
/// 31); runs are merged as `Document::push` merges segments.
pub fn run_bytes_dropping(config: &Config, chunks: &[&[u8]]) -> Flat {
    let mut p = StreamParser::new(config);
    let mut runs: Vec<(String, Vec<Annotation>)> = Vec::new();
    let mut markers = Vec::new();
    let mut take = |e: Event| match e {
        Event::Text(s) => match runs.last_mut() {
            Some(last) if s.same_annotations(&last.1) => last.0.push_str(s.text()),
            _ => runs.push((s.text().to_string(), s.annotations().to_vec())),
        },
        Event::Marker(m) => markers.push(m),
    };
    for c in chunks {
        p.update_bytes(c).expect("update_bytes").for_each(&mut take);
    }
    p.finish().expect("finish").for_each(&mut take);
    (runs, markers)
}

/// Splits `s` at the given byte positions (sorted, deduplicated by the caller).
pub fn split_at<'a>(s: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut last = 0;
    for &c in cuts {
        out.push(&s[last..c]);
        last = c;
    }
    out.push(&s[last..]);
    out
}

/// Random cut points (bytes), about `n` of them.
pub fn random_cuts(rng: &mut Rng, len: usize, n: usize) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    let mut v: Vec<usize> = (0..n).map(|_| rng.below(len + 1)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Rounds byte cuts down to char boundaries of `s`.
pub fn to_char_cuts(s: &str, cuts: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut c = c.min(s.len());
            while !s.is_char_boundary(c) {
                c -= 1;
            }
            c
        })
        .collect();
    v.dedup();
    v
}

/// Every way of feeding `input` that the determinism rule covers: every 2-way split (bytes
/// and chars), every 3-way split for short inputs, 1-byte and 1-char chunks, and `randoms`
/// random chunkings. Returns a description of the first chunking whose merged events differ
/// from `parse()`.
pub fn check_chunk_invariance(
    config: &Config,
    input: &str,
    rng: &mut Rng,
    randoms: usize,
) -> Result<(), String> {
    let want = parse(input, config);
    let bytes = input.as_bytes();
    let n = bytes.len();
    // `dropping`: also read each event and drop it at once, as `kxml` does (the parser then
    // reuses its buffers, decision 31), comparing the values with `parse()`'s.
    let flat_want = flat(&want);
    let check_bytes = |cuts: &[usize], what: &str, dropping: bool| -> Result<(), String> {
        let parts = split_at(bytes, cuts);
        let got = run_bytes(config, &parts);
        if got != want {
            return Err(format!(
                "{what} (bytes, cuts {cuts:?}):\n got  {got:?}\n want {want:?}"
            ));
        }
        if dropping {
            let got = run_bytes_dropping(config, &parts);
            if got != flat_want {
                return Err(format!(
                    "{what} (bytes, events dropped, cuts {cuts:?}):\n got  {got:?}\n want {flat_want:?}"
                ));
            }
        }
        Ok(())
    };
    for i in 0..=n {
        check_bytes(&[i], "2-way split", true)?;
    }
    if n <= 48 {
        for i in 0..=n {
            for j in i..=n {
                check_bytes(&[i, j], "3-way split", false)?;
            }
        }
    }
    let ones: Vec<usize> = (1..n).collect();
    check_bytes(&ones, "1-byte chunks", true)?;
    for _ in 0..randoms {
        let k = 1 + rng.below(n.max(1));
        let cuts = random_cuts(rng, n, k);
        check_bytes(&cuts, "random chunks", false)?;
    }
    let check_str = |cuts: &[usize], what: &str| -> Result<(), String> {
        let parts = split_at(bytes, cuts);
        let strs: Vec<&str> = parts
            .iter()
            .map(|p| std::str::from_utf8(p).expect("char cut"))
            .collect();
        let got = run_str(config, &strs);
        if got != want {
            return Err(format!(
                "{what} (str, cuts {cuts:?}):\n got  {got:?}\n want {want:?}"
            ));
        }
        Ok(())
    };
    for (i, _) in input.char_indices().skip(1) {
        check_str(&[i], "2-way split")?;
    }
    let chars: Vec<usize> = input.char_indices().map(|(i, _)| i).skip(1).collect();
    check_str(&chars, "1-char chunks")?;
    for _ in 0..randoms {
        let k = 1 + rng.below(n.max(1));
        let cuts = to_char_cuts(input, &random_cuts(rng, n, k));
        check_str(&cuts, "random chunks")?;
    }
    Ok(())
}

//! Deterministic corpus generator: LLM-like shapes at any size, written to stdout.
//!
//! ```text
//! cargo run --release --example gen_corpus -- SHAPE SIZE [SEED]
//!   SHAPE: prose | dense | plain | unicode | lt_flood | open_quote | one_line | amp_flood | deep_nest,
//!          or SHAPE_well_formed for its well-formed variant (the strict XML quick-xml is
//!          given in comparisons; see `well_formed` in benches/corpus.rs)
//!   SIZE:  bytes, with an optional K/M/G suffix (e.g. 100M)
//! ```
//!
//! Nothing large is committed: benches and CI generate what they need. The same shape, size
//! and seed always give the same bytes.

use std::io::{self, BufWriter, Write};

use kindaxml_stream_corpus::{generate, Shape};

#[path = "../benches/corpus.rs"]
mod kindaxml_stream_corpus;

fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: gen_corpus SHAPE[_well_formed] SIZE [SEED]   (shapes: prose dense plain unicode lt_flood open_quote one_line amp_flood deep_nest)";
    let name = args.first().map_or("", String::as_str);
    let well_formed = name.ends_with("_well_formed");
    let shape = Shape::from_name(name.trim_end_matches("_well_formed"));
    let (Some(shape), Some(size)) = (shape, args.get(1).and_then(|s| parse_size(s))) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let seed = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    if well_formed {
        // The strict-XML variant (for quick-xml comparisons), built in memory.
        let wf = kindaxml_stream_corpus::well_formed(shape, size as usize, seed);
        let _ = out.write_all(wf.as_bytes()).and_then(|()| out.flush());
        return;
    }
    let r = generate(shape, size, seed, &mut |chunk: &str| {
        out.write_all(chunk.as_bytes())
    });
    if let Err(e) = r.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("gen_corpus: {e}");
            std::process::exit(1);
        }
    }
}

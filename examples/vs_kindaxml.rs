//! Bench helper: one-shot timing of kindaxml 0.1.0 against our `parse()` on a generated
//! corpus — for sizes where kindaxml's quadratic time makes criterion sampling impractical.
//! Medians of `RUNS` runs (kindaxml: of `min(RUNS, 3)`). Ours first runs `WARM_RUNS`
//! times untimed, as criterion warms up: its first runs on a fresh heap take longer while
//! glibc raises its mmap and trim thresholds to the document's large blocks (prose 10 MB:
//! 42.9, 33.4, 30.0 ms, then 27 ms from the fourth run on; 1 MB: 7.0 ms falling to 2.6 ms
//! by the sixth), and a median of 5 from a cold start read that curve, not the parser
//! (DESIGN.md, decision 111). kindaxml's runs take seconds, which no warm-up changes.
//!
//! `cargo run --release --example vs_kindaxml -- prose 10M`

use std::time::Instant;

use kindaxml_stream::parse;

#[path = "../benches/corpus.rs"]
mod corpus;

/// Untimed runs of our `parse()` before the timed ones.
const WARM_RUNS: usize = 10;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shape = corpus::Shape::from_name(args.first().map_or("prose", |s| s)).expect("shape");
    let size = args.get(1).map_or(1 << 20, |s| {
        let (n, m) = match s.as_bytes().last() {
            Some(b'M') => (&s[..s.len() - 1], 1 << 20),
            Some(b'K') => (&s[..s.len() - 1], 1 << 10),
            _ => (s.as_str(), 1),
        };
        n.parse::<usize>().expect("size") * m
    });
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let input = corpus::corpus(shape, size, 1);
    let ours = corpus::compat_config();
    let theirs = corpus::kindaxml_config();
    for _ in 0..WARM_RUNS {
        std::hint::black_box(parse(&input, &ours));
    }
    let ours_t = median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(parse(&input, &ours));
                t.elapsed().as_secs_f64()
            })
            .collect(),
    );
    let theirs_t = median(
        (0..runs.min(3))
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(kindaxml::parse(&input, &theirs));
                t.elapsed().as_secs_f64()
            })
            .collect(),
    );
    let mb = input.len() as f64 / 1e6;
    println!(
        "{} {} bytes: ours {:.2} ms ({:.0} MB/s), kindaxml {:.1} ms ({:.1} MB/s), ratio {:.0}x",
        shape.name(),
        input.len(),
        ours_t * 1e3,
        mb / ours_t,
        theirs_t * 1e3,
        mb / theirs_t,
        theirs_t / ours_t
    );
}

//! Bench helper: one-shot timing of kindaxml 0.1.0 against our `parse()` on a generated
//! corpus — for sizes where kindaxml's quadratic time makes criterion sampling impractical.
//! kindaxml is timed `min(RUNS, 3)` times; ours `RUNS` times before each of those runs and
//! once more after the last, so that both sides' timings span the same stretch of the
//! host's time (at 10 MB kindaxml's runs take about 12 s each, ours about 30 ms, and this
//! shared host has slow and quiet stretches minutes long; DESIGN.md, decision 113). Each
//! side's figure is the median of its runs. Both sides are warmed up first, as criterion
//! warms up: ours runs `WARM_RUNS` times untimed, since a new process's first runs take
//! longer (a fresh heap, cold caches: at 1 and 10 MB of prose the first three took
//! 1.35–1.5×, 1.15–1.2× and 1.04–1.08× the later runs' time), and kindaxml once, where its
//! first run takes under a second; at 10 MB that first run is kept as one of the timed
//! ones (decision 111).
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
    let theirs_runs = runs.clamp(1, 3);
    let input = corpus::corpus(shape, size, 1);
    let ours = corpus::compat_config();
    let theirs = corpus::kindaxml_config();
    for _ in 0..WARM_RUNS {
        std::hint::black_box(parse(&input, &ours));
    }
    let mut ours_ts: Vec<f64> = Vec::new();
    let mut ours_batch = || {
        for _ in 0..runs {
            let t = Instant::now();
            std::hint::black_box(parse(&input, &ours));
            ours_ts.push(t.elapsed().as_secs_f64());
        }
    };
    let theirs_run = || {
        let t = Instant::now();
        std::hint::black_box(kindaxml::parse(&input, &theirs));
        t.elapsed().as_secs_f64()
    };
    ours_batch();
    let first = theirs_run();
    let mut theirs_ts: Vec<f64> = if first < 1.0 {
        Vec::new()
    } else {
        ours_batch();
        vec![first]
    };
    while theirs_ts.len() < theirs_runs {
        theirs_ts.push(theirs_run());
        ours_batch();
    }
    let ours_n = ours_ts.len();
    let ours_t = median(ours_ts);
    let theirs_t = median(theirs_ts);
    let mb = input.len() as f64 / 1e6;
    println!(
        "{} {} bytes: ours {:.2} ms ({:.0} MB/s), kindaxml {:.1} ms ({:.1} MB/s), ratio {:.0}x \
         (medians of {ours_n} and {theirs_runs} runs)",
        shape.name(),
        input.len(),
        ours_t * 1e3,
        mb / ours_t,
        theirs_t * 1e3,
        mb / theirs_t,
        theirs_t / ours_t
    );
}

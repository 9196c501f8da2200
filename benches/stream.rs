//! Overhead of the async `Stream` adapter per token versus calling `update` directly, on
//! 64 KB of generated prose cut into 4-byte (and 16-byte) tokens. Both sides consume every
//! event, and each asserts the same number of events.
//!
//! `cargo bench --bench stream --features stream`

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use futures::{executor::block_on, stream, StreamExt};
use kindaxml_stream::{Config, KindaxmlStreamExt, Strategy, StreamParser};

#[path = "corpus.rs"]
mod corpus;

fn direct(config: &Config, toks: &[&str]) -> usize {
    let mut p = StreamParser::new(config);
    let mut n = 0;
    for t in toks {
        n += p.update(t).unwrap().count();
    }
    n + p.finish().unwrap().count()
}

fn adapter(config: &Config, toks: &[&str]) -> usize {
    block_on(stream::iter(toks.iter().copied()).kindaxml(config).count())
}

fn bench(c: &mut Criterion) {
    let config = Config::default()
        .with_tags(["cite", "note", "todo"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap();
    let text = corpus::corpus(corpus::Shape::Prose, 64 << 10, 1);
    let mut g = c.benchmark_group("adapter");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for size in [4usize, 16] {
        let toks: Vec<&str> = corpus::str_tokens(&text, size).collect();
        assert_eq!(direct(&config, &toks), adapter(&config, &toks));
        g.bench_with_input(BenchmarkId::new("update", size), &toks, |b, t| {
            b.iter(|| black_box(direct(&config, black_box(t))))
        });
        g.bench_with_input(BenchmarkId::new("stream", size), &toks, |b, t| {
            b.iter(|| black_box(adapter(&config, black_box(t))))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

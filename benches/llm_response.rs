//! Seed 001's performance target: parse + validate a 10 KB `<llmResponse>` in < 10 ms.
//!
//! `cargo bench --bench llm_response` (add `-- --quick` for a short run). The input is a
//! generated 10 KB response in the contract's format — a long answer with entities, a bare
//! `&` and unknown markup, 3 subjects × 10 keywords, a long summary — read through
//! `examples/llm_response/contract.rs` one-shot and in 16-byte chunks (token-sized pieces),
//! next to the parse alone (one-shot, and in 4- and 16-byte chunks: the contract's tags all
//! recover forward, so the text inside them is emitted as it comes, an event per chunk).
//! Before the criterion runs it times both directly, prints the medians and asserts they are
//! under the target; each benchmark asserts its result.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "../examples/llm_response/contract.rs"]
mod contract;

use contract::{read_response, ResponseReader, Validated};

/// Target size of the generated response.
const SIZE: usize = 10 * 1024;

/// The seed's target for parsing a 10 KB response.
const TARGET: Duration = Duration::from_millis(10);

/// A 10 KB response: 3 subjects × 10 keywords, a ~1 KB summary, the rest answer text.
fn response_10k() -> String {
    const SENTENCES: [&str; 6] = [
        "For college savings, financial advisors often recommend 529 plans. ",
        "They offer tax advantages &amp; can be used for qualified education expenses. ",
        "The amount to save depends on the <b>current age</b> of children & expected costs. ",
        "Fees, taxes &amp; inflation (about 3&#37; a year) change the picture over time. ",
        "A Coverdell ESA caps contributions at $2,000 per year &lt;per beneficiary&gt;. ",
        "Starting early lets compound growth do most of the work for you. ",
    ];
    let mut analysis = String::from("  <analysis>\n");
    for s in 0..3 {
        analysis += &format!(
            "    <subject name=\"subject-{s}\" description=\"Saving strategies for higher education, part {s} &amp; more\" isNew=\"{}\">\n",
            s == 0
        );
        for k in 0..10 {
            analysis += &format!(
                "      <keyword term=\"term-{s}-{k}\" confidence=\"0.{}\" />\n",
                60 + 4 * k
            );
        }
        analysis += "    </subject>\n";
    }
    analysis += "    <summaryUpdate>";
    for i in 0..16 {
        analysis += SENTENCES[i % SENTENCES.len()];
    }
    analysis += "</summaryUpdate>\n  </analysis>\n</llmResponse>\n";

    let mut out = String::from("<llmResponse>\n  <response>");
    let room = SIZE - "</response>\n".len() - analysis.len();
    let mut i = 0;
    while out.len() + SENTENCES[i % SENTENCES.len()].len() < room {
        out += SENTENCES[i % SENTENCES.len()];
        i += 1;
    }
    while out.len() < room {
        out.push('.');
    }
    out += "</response>\n";
    out += &analysis;
    out
}

fn chunked(input: &str, size: usize) -> Result<Validated, contract::ResponseError> {
    let mut reader = ResponseReader::new();
    for c in input.as_bytes().chunks(size) {
        reader.update(std::str::from_utf8(c).expect("the input is ASCII"));
    }
    reader.finish()
}

fn check(v: &Result<Validated, contract::ResponseError>) {
    let v = v.as_ref().expect("the generated response is valid");
    assert_eq!(v.value.subjects.len(), 3);
    assert!(v.value.subjects.iter().all(|s| s.keywords.len() == 10));
    assert!(v.value.response.len() > 6000 && v.value.summary_update.len() > 1000);
    assert!(v.recoveries.is_empty());
}

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    t[runs / 2]
}

fn bench(c: &mut Criterion) {
    let input = response_10k();
    assert!(input.is_ascii() && input.len() == SIZE, "{}", input.len());
    check(&read_response(&input));
    assert_eq!(chunked(&input, 16), read_response(&input));

    for (name, m) in [
        (
            "one-shot",
            median(201, || {
                black_box(read_response(black_box(&input))).ok();
            }),
        ),
        (
            "16-byte chunks",
            median(201, || {
                black_box(chunked(black_box(&input), 16)).ok();
            }),
        ),
    ] {
        println!(
            "llm_response: parse + validate of {} bytes, {name}: median {m:?} (target < {TARGET:?})",
            input.len()
        );
        assert!(m < TARGET, "{name}: {m:?} is over the seed's {TARGET:?}");
    }

    let config = contract::config();
    let mut g = c.benchmark_group("llm_response/10K");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.bench_function("parse_only", |b| {
        b.iter(|| black_box(kindaxml_stream::parse(black_box(&input), &config)))
    });
    for size in [4, 16] {
        g.bench_function(format!("parse_only_{size}B_chunks"), |b| {
            b.iter(|| {
                let mut p = kindaxml_stream::StreamParser::new(&config);
                let mut n = 0;
                for c in black_box(&input).as_bytes().chunks(size) {
                    n += p.update_bytes(c).expect("valid UTF-8").count();
                }
                black_box(n + p.finish().expect("first finish").count())
            })
        });
    }
    g.bench_function("parse_validate", |b| {
        b.iter(|| black_box(read_response(black_box(&input))))
    });
    g.bench_function("parse_validate_16B_chunks", |b| {
        b.iter(|| black_box(chunked(black_box(&input), 16)))
    });
    g.finish();
}

criterion_group!(llm_response, bench);
criterion_main!(llm_response);

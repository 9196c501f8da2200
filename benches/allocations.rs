//! Allocations per MB of input, counted by a global allocator: for every corpus shape at
//! 1 MiB, `parse()` and `StreamParser` fed 64-, 4- and 1-byte chunks (events counted and
//! dropped as they come, as in the throughput bench), and `&str` tokens of at most 4 bytes
//! cut at char boundaries (as an LLM client hands them out).
//!
//! `cargo bench --bench allocations` prints a table and writes `target/bench-allocs.jsonl`
//! for `scripts/bench_table.py`. Counts, not times: the same on every run and machine with
//! the same allocator behaviour, so no sampling. Each streamed result is checked against
//! `parse()` first (in a pass that is not counted).
//!
//! Reported per run: allocations (`alloc` and `realloc` calls) per MB, bytes requested per
//! MB, the peak of live heap above what was live before the run, and the updates and events
//! to relate them to. The library's rule (DESIGN.md, decisions 31 and 69): allocations follow
//! tags and emissions longer than 4 KiB, never input bytes or updates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

use kindaxml_stream::{parse, Config, Document, StreamParser};

#[path = "corpus.rs"]
mod corpus;
use corpus::{compat_config, corpus, scaling_config, Shape};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY (all four methods): each forwards the caller's arguments to the system allocator
// unchanged and returns its result; the counters have no effect on the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(l.size(), Ordering::Relaxed);
        grow(l.size());
        // SAFETY: see above.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(l.size(), Ordering::Relaxed);
        grow(l.size());
        // SAFETY: see above.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: see above (`p` came from this allocator with layout `l`).
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new.saturating_sub(l.size()), Ordering::Relaxed);
        if new >= l.size() {
            grow(new - l.size());
        } else {
            LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
        }
        // SAFETY: see above.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// What one run cost.
struct Count {
    allocs: usize,
    bytes: usize,
    peak: usize,
    updates: usize,
    events: usize,
}

fn counted(run: impl FnOnce() -> (usize, usize)) -> Count {
    let (a0, b0, live0) = (
        ALLOCS.load(Ordering::Relaxed),
        BYTES.load(Ordering::Relaxed),
        LIVE.load(Ordering::Relaxed),
    );
    PEAK.store(live0, Ordering::Relaxed);
    let (updates, events) = run();
    Count {
        allocs: ALLOCS.load(Ordering::Relaxed) - a0,
        bytes: BYTES.load(Ordering::Relaxed) - b0,
        peak: PEAK.load(Ordering::Relaxed).saturating_sub(live0),
        updates,
        events,
    }
}

fn streamed(config: &Config, input: &str, mode: Mode) -> Document {
    let mut p = StreamParser::new(config);
    let mut d = Document::new();
    match mode {
        Mode::Parse => return parse(input, config),
        Mode::Bytes(n) => {
            for c in input.as_bytes().chunks(n) {
                d.extend(p.update_bytes(c).expect("update"));
            }
        }
        Mode::Str(n) => {
            for c in corpus::str_tokens(input, n) {
                d.extend(p.update(c).expect("update"));
            }
        }
    }
    d.extend(p.finish().expect("finish"));
    d
}

#[derive(Clone, Copy)]
enum Mode {
    Parse,
    Bytes(usize),
    Str(usize),
}

impl Mode {
    fn label(self) -> String {
        match self {
            Mode::Parse => "parse".into(),
            Mode::Bytes(n) => format!("bytes {n}"),
            Mode::Str(n) => format!("str ≤{n}"),
        }
    }
}

fn measure(config: &Config, input: &str, mode: Mode) -> Count {
    match mode {
        Mode::Parse => counted(|| {
            let doc = parse(input, config);
            (1, doc.segments().len() + doc.markers().len())
        }),
        Mode::Bytes(n) => counted(|| {
            let mut p = StreamParser::new(config);
            let (mut updates, mut events) = (0, 0);
            for c in input.as_bytes().chunks(n) {
                events += p.update_bytes(c).expect("update").count();
                updates += 1;
            }
            (updates, events + p.finish().expect("finish").count())
        }),
        Mode::Str(n) => {
            // The token list is built before counting.
            let tokens: Vec<&str> = corpus::str_tokens(input, n).collect();
            counted(|| {
                let mut p = StreamParser::new(config);
                let mut events = 0;
                for c in &tokens {
                    events += p.update(c).expect("update").count();
                }
                (tokens.len(), events + p.finish().expect("finish").count())
            })
        }
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument, if any, selects shapes by name.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let size = 1 << 20;
    let modes = [
        Mode::Parse,
        Mode::Bytes(64),
        Mode::Bytes(4),
        Mode::Bytes(1),
        Mode::Str(4),
    ];
    std::fs::create_dir_all("target").expect("target dir");
    let mut jsonl = std::fs::File::create("target/bench-allocs.jsonl").expect("jsonl");
    println!(
        "{:<11} {:<8} {:>10} {:>12} {:>11} {:>10} {:>9}",
        "shape", "mode", "allocs/MB", "bytes/MB", "peak live", "updates", "events"
    );
    for shape in Shape::ALL {
        if !filter.is_empty() && !filter.iter().any(|f| shape.name().contains(f.as_str())) {
            continue;
        }
        // The throughput benches' configuration, and the scaling benches' for the hostile
        // shapes (a bounded held window; nested mode for `deep_nest`).
        let config = if shape.is_hostile() {
            scaling_config(shape)
        } else {
            compat_config()
        };
        let input = corpus(shape, size, 1);
        let want = parse(&input, &config);
        let mb = input.len() as f64 / f64::from(1 << 20);
        for mode in modes {
            assert!(
                streamed(&config, &input, mode) == want,
                "{} {}: differs from parse()",
                shape.name(),
                mode.label()
            );
            let c = measure(&config, &input, mode);
            println!(
                "{:<11} {:<8} {:>10.0} {:>12.0} {:>11} {:>10} {:>9}",
                shape.name(),
                mode.label(),
                c.allocs as f64 / mb,
                c.bytes as f64 / mb,
                c.peak,
                c.updates,
                c.events
            );
            let (kind, chunk) = match mode {
                Mode::Parse => ("parse", 0),
                Mode::Bytes(n) => ("bytes", n),
                Mode::Str(n) => ("str", n),
            };
            writeln!(
                jsonl,
                "{{\"kind\":\"allocs\",\"shape\":\"{}\",\"mode\":\"{kind}\",\"chunk\":{chunk},\"bytes_in\":{},\"allocs\":{},\"bytes\":{},\"peak\":{},\"updates\":{},\"events\":{}}}",
                shape.name(),
                input.len(),
                c.allocs,
                c.bytes,
                c.peak,
                c.updates,
                c.events
            )
            .expect("write");
        }
    }
}

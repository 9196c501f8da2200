//! Memory footprint, measured with a counting global allocator: per-stream size of an idle
//! parser (inline + heap), 100,000 idle parsers, allocations per MB of input, and how often
//! a short stream grows its buffers.
//!
//! The numbers are printed (`cargo test --test footprint -- --nocapture`) and bounded.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use kindaxml_stream::{Config, Strategy, StreamParser};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static REALLOCS: AtomicUsize = AtomicUsize::new(0);
/// The tests in this file measure process-wide counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    /// Whether this thread's allocations are counted: only those of the test that is
    /// measuring, not those the test harness makes on its other threads meanwhile (its
    /// bookkeeping when another test ends made `token_streams_take_the_queue_in_one_step`
    /// count one or two reallocations too many in about half the runs).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

fn counted() -> bool {
    COUNTED.try_with(Cell::get).unwrap_or(false)
}

/// While alive: this test alone measures, and this thread's allocations count.
struct Measuring(#[allow(dead_code)] MutexGuard<'static, ()>);

fn measuring() -> Measuring {
    let g = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    COUNTED.with(|c| c.set(true));
    Measuring(g)
}

impl Drop for Measuring {
    fn drop(&mut self) {
        COUNTED.with(|c| c.set(false));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if counted() {
            LIVE.fetch_add(l.size(), Ordering::Relaxed);
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwards the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if counted() {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        }
        // SAFETY: `p` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if counted() {
            LIVE.fetch_add(new, Ordering::Relaxed);
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
            ALLOCS.fetch_add(1, Ordering::Relaxed);
            REALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same pointer and layout as allocated; `new` is the caller's size.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn config() -> Config {
    Config::default()
        .with_tags(["cite", "note", "todo"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap()
        .with_raw_tags(["think"])
        .unwrap()
}

/// A paragraph of an LLM answer: postfix cites, a note, plain prose, a paragraph break.
const UNIT: &str = "We shipped the sync engine last week <cite id=1>. Crash reports fell by 40% <cite id=2>, \
                    and <note>the EU rollout waits for legal</note>. Plain prose follows here, with no tags at all, \
                    just words and punctuation; and more of it.\n\n";

/// Streams `input` through `p` in `chunk`-byte pieces, reading and dropping the events as
/// they come (as `kxml` does); returns how many there were.
fn stream(p: &mut StreamParser, input: &str, chunk: usize) -> usize {
    let mut events = 0;
    for c in input.as_bytes().chunks(chunk) {
        events += p.update_bytes(c).unwrap().count();
    }
    events + p.finish().unwrap().count()
}

#[test]
fn idle_parsers_are_small() {
    let _g = measuring();
    let compiled = config().compile();
    let inline = std::mem::size_of::<StreamParser>();
    let before = LIVE.load(Ordering::Relaxed);
    let n = 100_000;
    let parsers: Vec<StreamParser> = (0..n)
        .map(|_| StreamParser::from_compiled(&compiled))
        .collect();
    let total = LIVE.load(Ordering::Relaxed) - before;
    let heap_each = (total - n * inline) / n;
    eprintln!(
        "StreamParser: {inline} bytes inline + {heap_each} bytes heap idle; {n} idle parsers: {:.1} MiB",
        total as f64 / (1 << 20) as f64
    );
    assert!(
        inline + heap_each <= 1024,
        "{inline} + {heap_each} bytes per idle parser"
    );
    assert!(total <= 128 << 20);
    drop(parsers);
}

#[test]
fn allocations_per_megabyte() {
    let _g = measuring();
    let input = UNIT.repeat((1 << 20) / UNIT.len());
    let mut report = Vec::new();
    for chunk in [input.len(), 4096, 64, 4, 1] {
        let mut p = StreamParser::new(&config());
        let start = ALLOCS.load(Ordering::Relaxed);
        let events = stream(&mut p, &input, chunk);
        let allocs = ALLOCS.load(Ordering::Relaxed) - start;
        let per_mb = allocs as f64 * (1 << 20) as f64 / input.len() as f64;
        let tags = input.matches("<cite").count() + input.matches("<note").count();
        report.push(format!(
            "chunk {chunk}: {allocs} allocations ({per_mb:.0}/MB) for {tags} tags and {events} events"
        ));
        // Allocation follows the tags, never the input bytes, the updates nor the number of
        // segments: one annotation per tag (short attribute names and values are inline),
        // one text buffer per emission of more than 4 KiB shared by its segments (a
        // shorter one reuses the parser's pooled buffer, as the events here are dropped
        // before the next update), replay buffers reused, plus amortized growth. The text
        // has a paragraph break per three tags, so longer emissions add fewer than tags.
        assert!(
            allocs <= 2 * tags + 64,
            "{allocs} allocations for {tags} tags, {events} events at chunk {chunk}"
        );
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn long_emissions_reuse_the_pooled_buffer() {
    let _g = measuring();
    // Emissions of 0.2 to 4 KiB: paragraphs of plain text of growing length, each ended by
    // a postfix cite (the tag's end is an emission), and plain text with no tag at all (the
    // text is emitted as a line ends). A consumer that drops its events before the next
    // update gets every emission of up to 4 KiB in the parser's pooled buffer (decision 69):
    // allocations follow the tags (one annotation each) plus the pool's growth, not the
    // emissions. Decision 31's 128-byte pool allocated once per emission here.
    let mut cited = String::new();
    let mut plain = String::new();
    for k in 0..200 {
        let words = "more prose with no tag in it; ".repeat(8 + (k * 7) % 120);
        cited.push_str(&format!("{words}<cite id={k}>.\n"));
        plain.push_str(&words);
        plain.push('\n');
    }
    let tags = cited.matches("<cite").count();
    let emissions = |input: &str| input.matches('\n').count();
    for (name, input, annotations) in [("cited", &cited, tags), ("plain", &plain, 0)] {
        for chunk in [64, 4, 1] {
            let mut p = StreamParser::new(&config());
            let start = ALLOCS.load(Ordering::Relaxed);
            let events = stream(&mut p, input, chunk);
            let allocs = ALLOCS.load(Ordering::Relaxed) - start;
            eprintln!(
                "{name}, {} bytes in {chunk}-byte chunks: {allocs} allocations for {annotations} \
                 tags, {} lines, {events} events",
                input.len(),
                emissions(input)
            );
            assert!(events >= emissions(input), "{name}: {events} events");
            assert!(
                allocs <= annotations + 32,
                "{name} in {chunk}-byte chunks: {allocs} allocations for {annotations} tags"
            );
        }
    }
}

#[test]
fn token_streams_take_the_queue_in_one_step() {
    let _g = measuring();
    // Short answers (one and four KiB of paragraphs with postfix cites and notes), as a
    // server holding many LLM streams sees them: a new parser each time. Token-sized chunks
    // (16 bytes and less) mostly wait in the queue while their line is held (decision 48);
    // 64-byte chunks mostly go through the machine. The queue takes room for a line when it
    // is first used (DESIGN.md, decision 49) instead of doubling from 8 bytes (6 steps to
    // 512), so token-sized chunks cost at most one reallocation more than 64-byte chunks.
    let compiled = config().compile();
    for paragraphs in [4, 16] {
        let input = UNIT.repeat(paragraphs);
        let reallocs = |chunk: usize| {
            // Events are dropped as they come, so only the parser's own buffers grow here.
            let mut p = StreamParser::from_compiled(&compiled);
            let before = REALLOCS.load(Ordering::Relaxed);
            assert!(stream(&mut p, &input, chunk) > 0);
            REALLOCS.load(Ordering::Relaxed) - before
        };
        let base = reallocs(64);
        for chunk in [16, 4, 1] {
            let grown = reallocs(chunk);
            eprintln!(
                "{} bytes in {chunk}-byte chunks: {grown} reallocations; in 64-byte chunks: {base}",
                input.len()
            );
            assert!(
                grown <= base + 1,
                "{grown} reallocations in {chunk}-byte chunks, {base} in 64-byte chunks"
            );
        }
    }
}

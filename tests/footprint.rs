//! Memory footprint, measured with a counting global allocator: per-stream size of an idle
//! parser (inline + heap), 100,000 idle parsers, and allocations per MB of input.
//!
//! The numbers are printed (`cargo test --test footprint -- --nocapture`) and bounded.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use kindaxml_stream::{Config, Strategy, StreamParser};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
/// The tests in this file measure process-wide counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwards the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: `p` was allocated by `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        ALLOCS.fetch_add(1, Ordering::Relaxed);
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

#[test]
fn idle_parsers_are_small() {
    let _g = SERIAL.lock().unwrap();
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
    let _g = SERIAL.lock().unwrap();
    let unit = "We shipped the sync engine last week <cite id=1>. Crash reports fell by 40% <cite id=2>, \
                and <note>the EU rollout waits for legal</note>. Plain prose follows here, with no tags at all, \
                just words and punctuation; and more of it.\n\n";
    let input = unit.repeat((1 << 20) / unit.len());
    let mut report = Vec::new();
    for chunk in [input.len(), 4096, 64, 4, 1] {
        let mut p = StreamParser::new(&config());
        let start = ALLOCS.load(Ordering::Relaxed);
        let mut events = 0;
        for c in input.as_bytes().chunks(chunk) {
            events += p.update_bytes(c).unwrap().count();
        }
        events += p.finish().unwrap().count();
        let allocs = ALLOCS.load(Ordering::Relaxed) - start;
        let per_mb = allocs as f64 * (1 << 20) as f64 / input.len() as f64;
        let tags = input.matches("<cite").count() + input.matches("<note").count();
        report.push(format!(
            "chunk {chunk}: {allocs} allocations ({per_mb:.0}/MB) for {tags} tags and {events} events"
        ));
        // Allocation follows the tags, never the input bytes, the updates nor the number of
        // segments: one annotation per tag (short attribute names and values are inline),
        // one text buffer per emission of more than 128 bytes shared by its segments (a
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

//! `--format count`: the tally, and the parallel count of a file (DESIGN.md, decision 71).
//!
//! A file of at least `2 * MIN_PART` bytes is cut into parts (`PARTS_PER_THREAD` per thread),
//! each starting right after a newline; the threads take the next part as they finish one.
//! Every part is parsed by a parser of its own, started as if the part were the whole
//! input. That parser's result is used only from a point where the
//! parser that has read everything before it is, exactly, in the state of a new parser
//! (`StreamParser::is_restartable`): from there a new parser emits what the one that read
//! everything would. The parts are then joined in order:
//!
//! ```text
//! part 0            ──────────▶ P, at b1
//! part 1         b1 ─c1─c2─…──▶ its parser Q1, and a tally per interval b1..c1, c1..c2, …
//!
//! P restartable at b1?         yes: take Q1's tallies from b1 on, Q1 goes on as P
//! else feed P b1..c1, then ask at c1 (where Q1 was restartable too), and so on;
//! no such point in the part: P reads all of it (the sequential result, only later)
//! ```
//!
//! The checkpoints `c` are the ends of the part's reads (64 KiB, cut after their last
//! newline). A part restartable at none of its first `GIVE_UP_AFTER` checkpoints stops there
//! and joins nowhere. The result is the sequential one in every case; only the time it takes
//! depends on how often the state is restartable. Any error (I/O, invalid UTF-8) in the
//! parallel run discards it and counts again sequentially, so the message and its offset
//! are those of the sequential run.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicUsize, Ordering};

use kindaxml_stream::{Annotation, Annotations, CompiledConfig, Event, StreamParser};

/// Smallest part worth a thread of its own: a parse of 64 KiB takes about as long as
/// starting a thread takes a few hundred times.
pub const MIN_PART: u64 = 64 << 10;

/// Most parts (and threads) a count uses, whatever `--threads` asks.
const MAX_PARTS: u64 = 256;

/// Parts per thread. Threads take the next part when they finish one, so a core that
/// another process slows down parses fewer parts instead of holding up the end (in fixed
/// halves, the count waits for the slower core). Each part beyond the first may need up to
/// one checkpoint's interval (64 KiB) read again when it joins.
const PARTS_PER_THREAD: u64 = 4;

/// Bytes per read (and the spacing of the checkpoints where parts can join).
const READ: usize = 64 << 10;

/// Checkpoints after which a part that was restartable at none of them stops: it can then
/// join only at its start, and text this far from restartable most likely is not there
/// either (every line ending in a postfix cite). Stopping leaves the core to the part
/// before it, which reads this one anyway (non-Latin text, 100 MB: 0.221 s on two threads
/// when the part ran to its end, 0.205 s on one).
const GIVE_UP_AFTER: usize = 8;

/// Counts of a run of the output, joined in order with [`Tally::then`]: the segments are
/// canonical (equal neighbours merged, as `Document::push` merges them), across joins too.
#[derive(Default, Clone)]
pub struct Tally {
    pub text_bytes: u64,
    pub segments: u64,
    pub markers: u64,
    /// The annotations of the run's first and last segments (`None`: no text yet).
    first: Option<Annotations>,
    last: Option<Annotations>,
}

fn same(a: &[Annotation], b: &[Annotation]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_value(y))
}

impl Tally {
    pub fn event(&mut self, e: &Event) {
        match e {
            Event::Text(s) => {
                // (Its length without slicing the text out of its buffer.)
                self.text_bytes += (s.end() - s.start()) as u64;
                let anns = s.annotations();
                match &mut self.last {
                    Some(last) if same(last, anns) => {}
                    Some(last) => {
                        self.segments += 1;
                        // A copy of the list (reference counts), not the segment: a kept
                        // segment would keep the parser's pooled buffer from being reused.
                        last.clear();
                        for a in anns {
                            last.push(a.clone());
                        }
                    }
                    None => {
                        self.segments += 1;
                        let list: Annotations = anns.iter().cloned().collect();
                        self.first = Some(list.clone());
                        self.last = Some(list);
                    }
                }
            }
            Event::Marker(_) => self.markers += 1,
        }
    }

    /// This run followed by `next`.
    fn then(mut self, next: &Tally) -> Tally {
        self.text_bytes += next.text_bytes;
        self.markers += next.markers;
        self.segments += next.segments;
        if let (Some(l), Some(f)) = (&self.last, &next.first) {
            if same(l, f) {
                self.segments -= 1;
            }
        }
        if self.first.is_none() {
            self.first.clone_from(&next.first);
        }
        if next.last.is_some() {
            self.last.clone_from(&next.last);
        }
        self
    }
}

/// A part of the file, parsed from its start by a new parser.
struct Part {
    /// `[start, end)` of the file.
    start: u64,
    end: u64,
    /// Where the intervals start (the first is `start`), whether the parser was restartable
    /// there (at `start`: new, so yes), and the tally of each interval.
    intervals: Vec<(u64, bool, Tally)>,
    /// The parser, not finished, having read the whole part; `None` if the part stopped
    /// early (`GIVE_UP_AFTER`): it joins nowhere.
    parser: Option<StreamParser>,
}

/// Why the parallel count gave up (the caller then counts sequentially).
struct GiveUp;

/// The parse of one part (on its own thread); `may_stop`: at `GIVE_UP_AFTER` checkpoints
/// none of which was restartable.
fn parse_part(
    path: &str,
    start: u64,
    end: u64,
    compiled: &CompiledConfig,
    lossy: bool,
    may_stop: bool,
) -> Result<Part, GiveUp> {
    let mut input = open_range(path, start, end)?;
    let mut parser = StreamParser::from_compiled(compiled).with_lossy_utf8(lossy);
    let mut intervals = vec![(start, true, Tally::default())];
    let mut buf = vec![0u8; READ];
    let mut carry = 0;
    let mut pos = start;
    loop {
        let n = read_some(&mut input, &mut buf[carry..]).map_err(|_| GiveUp)?;
        if n == 0 {
            if carry > 0 {
                feed(&mut parser, &buf[..carry], tally_of(&mut intervals))?;
                pos += carry as u64;
            }
            break;
        }
        let filled = carry + n;
        // Up to the last newline, so that the read's end is a line start (a checkpoint).
        let nl = memchr::memrchr(b'\n', &buf[..filled]);
        let cut = nl.map_or(filled, |k| k + 1);
        feed(&mut parser, &buf[..cut], tally_of(&mut intervals))?;
        pos += cut as u64;
        buf.copy_within(cut..filled, 0);
        carry = filled - cut;
        // (Not at the part's end: the next part starts there.)
        if nl.is_some() && pos < end {
            let ok = parser.is_restartable();
            intervals.push((pos, ok, Tally::default()));
            if may_stop
                && intervals.len() > GIVE_UP_AFTER
                && intervals.iter().skip(1).all(|iv| !iv.1)
            {
                return Ok(Part {
                    start,
                    end,
                    intervals: Vec::new(),
                    parser: None,
                });
            }
        }
    }
    if pos != end {
        // The file changed under us.
        return Err(GiveUp);
    }
    Ok(Part {
        start,
        end,
        intervals,
        parser: Some(parser),
    })
}

/// The file's bytes `[from, to)`, as a reader.
fn open_range(path: &str, from: u64, to: u64) -> Result<io::Take<File>, GiveUp> {
    let mut file = File::open(path).map_err(|_| GiveUp)?;
    file.seek(SeekFrom::Start(from)).map_err(|_| GiveUp)?;
    Ok(file.take(to - from))
}

fn tally_of(intervals: &mut [(u64, bool, Tally)]) -> &mut Tally {
    // (Never empty: the first interval is pushed before anything is fed.)
    &mut intervals.last_mut().expect("an interval").2
}

fn read_some(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match input.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

fn feed(parser: &mut StreamParser, bytes: &[u8], tally: &mut Tally) -> Result<(), GiveUp> {
    for e in parser.update_bytes(bytes).map_err(|_| GiveUp)? {
        tally.event(&e);
    }
    Ok(())
}

/// Feeds the file's `[from, to)` to `parser`.
fn feed_range(
    parser: &mut StreamParser,
    path: &str,
    from: u64,
    to: u64,
    tally: &mut Tally,
) -> Result<(), GiveUp> {
    let mut input = open_range(path, from, to)?;
    let mut buf = vec![0u8; READ];
    let mut done = from;
    loop {
        let n = read_some(&mut input, &mut buf).map_err(|_| GiveUp)?;
        if n == 0 {
            break;
        }
        feed(parser, &buf[..n], tally)?;
        done += n as u64;
    }
    if done == to {
        Ok(())
    } else {
        Err(GiveUp)
    }
}

/// Part boundaries: `parts - 1` points spread evenly, each moved to just after the next
/// newline (a point with none in the 64 KiB after it is dropped).
fn boundaries(path: &str, len: u64, parts: u64) -> Result<Vec<u64>, GiveUp> {
    let mut file = File::open(path).map_err(|_| GiveUp)?;
    let mut out = vec![0];
    let mut buf = vec![0u8; READ];
    for i in 1..parts {
        let at = len / parts * i;
        if at <= *out.last().unwrap_or(&0) {
            continue;
        }
        file.seek(SeekFrom::Start(at)).map_err(|_| GiveUp)?;
        let n = read_some(&mut (&mut file).take(READ as u64), &mut buf).map_err(|_| GiveUp)?;
        if let Some(k) = memchr::memchr(b'\n', &buf[..n]) {
            let b = at + k as u64 + 1;
            if b < len {
                out.push(b);
            }
        }
    }
    out.push(len);
    Ok(out)
}

/// The count of the file at `path` (`len` bytes), its parts parsed on `threads` threads;
/// `None` if that failed in any way (then the caller counts sequentially, which reports
/// any error the same way whatever the thread count).
pub fn count_file(
    path: &str,
    len: u64,
    compiled: &CompiledConfig,
    lossy: bool,
    threads: usize,
    trace: bool,
) -> Option<Tally> {
    let threads = (threads as u64).clamp(1, MAX_PARTS);
    let parts = (threads * PARTS_PER_THREAD)
        .min(MAX_PARTS)
        .min(len / MIN_PART)
        .max(1);
    let bounds = boundaries(path, len, parts).ok()?;
    let spans: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    if trace {
        eprintln!("kxml: count in {} parts", spans.len());
    }
    // Each thread takes the next part when it is done with one.
    let next = AtomicUsize::new(0);
    // Each thread's parsers take their configuration from a copy made on that thread, so
    // that the reference counts of any tag names past the interning limits, which every
    // tag opened and every annotation dropped writes, are not cache lines the other cores
    // write too (decisions 108 and 117).
    let work = || {
        let compiled = &compiled.unshared();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(a, b)) = spans.get(i) else {
                break;
            };
            done.push((i, parse_part(path, a, b, compiled, lossy, i > 0)));
        }
        done
    };
    let mut slots: Vec<Option<Result<Part, GiveUp>>> = spans.iter().map(|_| None).collect();
    std::thread::scope(|s| {
        // A thread the system refuses leaves its parts to the others.
        let helpers: Vec<_> = (1..threads.min(spans.len() as u64))
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        let mut done = work();
        for h in helpers {
            // (A thread that panicked leaves its parts empty: the count fails.)
            done.extend(h.join().unwrap_or_default());
        }
        for (i, part) in done {
            if let Some(slot) = slots.get_mut(i) {
                *slot = Some(part);
            }
        }
    });
    let mut parts = slots.into_iter().map(|p| p.unwrap_or(Err(GiveUp)));
    let head = parts.next().unwrap_or(Err(GiveUp));
    let tally = head.and_then(|head| join(path, head, parts.collect(), trace));
    if trace && tally.is_err() {
        eprintln!("kxml: the parallel count failed; counting on one thread");
    }
    tally.ok()
}

/// The parts joined in order, then finished.
/// `trace`: one line per part on stderr, saying where it joined (`KXML_TRACE_PARTS`).
fn join(
    path: &str,
    head: Part,
    parts: Vec<Result<Part, GiveUp>>,
    trace: bool,
) -> Result<Tally, GiveUp> {
    let mut tally = head
        .intervals
        .iter()
        .fold(Tally::default(), |t, iv| t.then(&iv.2));
    let mut parser = head.parser.ok_or(GiveUp)?;
    let mut pos = head.end;
    for part in parts {
        let part = part?;
        debug_assert_eq!(part.start, pos);
        let stopped = part.parser.is_none();
        let mut taken = None;
        for (j, (at, restartable, _)) in part.intervals.iter().enumerate() {
            if *at > pos {
                let mut t = Tally::default();
                feed_range(&mut parser, path, pos, *at, &mut t)?;
                tally = tally.then(&t);
                pos = *at;
            }
            if *restartable && parser.is_restartable() {
                tally = part.intervals[j..]
                    .iter()
                    .fold(tally, |t, iv| t.then(&iv.2));
                taken = part.parser;
                break;
            }
        }
        if trace {
            let how = match (&taken, stopped) {
                (Some(_), _) => format!("joined at {pos}"),
                (None, false) => format!("read through from {pos}"),
                (None, true) => "stopped early, read through".to_string(),
            };
            eprintln!("kxml: part {}..{}: {how}", part.start, part.end);
        }
        if let Some(p) = taken {
            parser = p;
        } else {
            let mut t = Tally::default();
            feed_range(&mut parser, path, pos, part.end, &mut t)?;
            tally = tally.then(&t);
        }
        pos = part.end;
    }
    let mut t = Tally::default();
    for e in parser.finish().map_err(|_| GiveUp)? {
        t.event(&e);
    }
    Ok(tally.then(&t))
}

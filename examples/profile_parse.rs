//! Profiling helper: parses a generated corpus N times (`cargo run --release --example
//! profile_parse -- SHAPE SIZE ITERS [CHUNK]`).
//!
//! `ENGINE` picks what runs on the input, for instruction counts under callgrind
//! (`scripts/bench_extra.sh`): `ours` (default), `ours_wf` (ours on the well-formed variant of
//! the shape), `quickxml` (quick-xml's Reader event loop on the well-formed variant),
//! `quickxml_doc` (quick-xml's Reader building the document `ours_wf` builds, decision 109),
//! `kindaxml` (kindaxml 0.1.0's `parse`), `memchr` (a scan for `<`), `floor` (the document
//! `parse()` returns, parsed once before the runs, rebuilt from scratch by
//! `Document::rebuilt` in each: about the least work its types allow, decision 115) and,
//! with a chunk size, `ours_str` (`&str` chunks cut at char boundaries, fed with `update`,
//! as an LLM client hands out tokens, instead of byte chunks fed with `update_bytes`),
//! `ours_stops` (byte
//! chunks cut after each `>` and newline, the bytes that can end the queue in this
//! configuration: about one update per tag or line, so its count over one-shot's is what the
//! updates cost without the per-chunk path of token-sized chunks; the cuts are found before
//! the timed runs, and the chunk size is ignored), `ours_lines` (the same, cut after each
//! newline only: one update per line, so its time over one-shot's is what a stream pays per
//! line, and a 4-byte stream's time over its own is what the chunks cost: decision 105), and
//! `collect` (byte chunks appended to a buffer sized for the whole input, then validated and
//! parsed once: the same chunks received without streaming, `corpus::collected`).
//! `CONSTRUCT` (a name from `corpus::CONSTRUCTS`) replaces the shape's corpus with SIZE lines
//! of that one construct (its well-formed form for the well-formed engines), for the
//! instruction counts per construct (`scripts/bench_extra.sh`). `ITERS=0` only
//! generates the input, so its count is the baseline to subtract. `WARMUP` (set to
//! anything) adds one untimed run before the timed ones. `PRESET=scaling` selects
//! the configuration of the scaling benches; `PRESET=default`, `Config::default()` with
//! the corpus's tags (they recover `retro_claim`); `PRESET=forward`, the same with them all
//! recovering `forward_until_tag` (a structured answer's contract: text inside tags is
//! final as it comes, trimming aside); `PRESET=raw`, the corpus wrapped in one `<think>`
//! block, a raw tag, with trimming off (as `TagMatcher` sets it); otherwise that of
//! `benches/throughput.rs`. `THREADS=N` runs the runs on N threads at once, each on its own
//! copy of the input, all with the one configuration or, with `OWN_CONFIG` set, each with
//! one built on its thread; their clocks start together, and the rate printed is all
//! threads' bytes over the slowest thread's time (decision 117).
use kindaxml_stream::{parse, StreamParser};

#[path = "../benches/corpus.rs"]
mod corpus;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shape = corpus::Shape::from_name(args.first().map_or("prose", |s| s)).expect("shape");
    let size: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let chunk: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let engine = std::env::var("ENGINE").unwrap_or_else(|_| "ours".into());
    let preset = std::env::var("PRESET").unwrap_or_default();
    let well_formed = matches!(engine.as_str(), "ours_wf" | "quickxml" | "quickxml_doc");
    let input = match std::env::var("CONSTRUCT") {
        Ok(name) => corpus::construct(&name, size, well_formed).expect("a construct's name"),
        Err(_) if well_formed => corpus::well_formed(shape, size, 1),
        Err(_) if preset == "raw" => format!("<think>{}</think>", corpus::corpus(shape, size, 1)),
        Err(_) => corpus::corpus(shape, size, 1),
    };
    let make_config = || match preset.as_str() {
        "scaling" => corpus::scaling_config(shape),
        "raw" => kindaxml_stream::Config::default()
            .with_raw_tags(["think"])
            .expect("valid names")
            .with_trim_punctuation(false),
        "default" => kindaxml_stream::Config::default()
            .with_tags(["cite", "note", "todo"])
            .expect("valid names"),
        "forward" => kindaxml_stream::Config::default()
            .with_tags(["cite", "note", "todo"])
            .expect("valid names")
            .with_default_recovery(kindaxml_stream::Strategy::ForwardUntilTag),
        // The configuration of the throughput benches.
        _ => corpus::compat_config(),
    };
    let config = make_config();
    let theirs = corpus::kindaxml_config();
    // `ours_stops` and `ours_lines`: where each chunk ends (after each byte it is cut at).
    let cut_at: Vec<usize> = match engine.as_str() {
        "ours_stops" => memchr::memchr2_iter(b'>', b'\n', input.as_bytes()).collect(),
        "ours_lines" => memchr::memchr_iter(b'\n', input.as_bytes()).collect(),
        _ => Vec::new(),
    };
    let stops: Vec<usize> = cut_at.iter().map(|i| i + 1).chain([input.len()]).collect();
    // `floor`: the document, parsed before the timed runs, which then rebuild it.
    let parsed = (engine == "floor").then(|| parse(&input, &config));
    // `WARMUP`: one untimed run first, so that every timed run finds the heap already grown
    // (a timing of few runs otherwise charges the first one's page faults to its size). One
    // loop, so the parse inlines into it as it would without the warm-up.
    let warm = usize::from(std::env::var_os("WARMUP").is_some());
    // `THREADS`: see the module's documentation.
    let threads: usize = std::env::var("THREADS").map_or(1, |t| t.parse().expect("a count"));
    let own_config = std::env::var_os("OWN_CONFIG").is_some();
    // The threads' clocks start together, once every thread has its input, configuration
    // and warm-up run.
    let ready = std::sync::Barrier::new(threads.max(1));
    let run = |input: &str, config: &kindaxml_stream::Config| {
        let mut start = std::time::Instant::now();
        let mut n = 0;
        for i in 0..warm + iters {
            if i == warm {
                ready.wait();
                start = std::time::Instant::now();
                n = 0;
            }
            n += match engine.as_str() {
                "quickxml" => corpus::quick_xml_events(input),
                "quickxml_doc" => corpus::quick_xml_document(input, &["cite", "note", "todo"])
                    .segments
                    .len(),
                "kindaxml" => kindaxml::parse(input, &theirs).segments.len(),
                "memchr" => memchr::memchr_iter(b'<', input.as_bytes()).count(),
                "floor" => parsed.as_ref().map_or(0, |d| d.rebuilt().segments().len()),
                "ours_stops" | "ours_lines" => {
                    let mut p = StreamParser::new(config);
                    let mut k = 0;
                    let mut at = 0;
                    for &end in &stops {
                        k += p.update_bytes(&input.as_bytes()[at..end]).unwrap().count();
                        at = end;
                    }
                    k + p.finish().unwrap().count()
                }
                _ if chunk == 0 => parse(input, config).segments().len(),
                "collect" => corpus::collected(config, input, chunk).segments().len(),
                "ours_str" if chunk > 0 => {
                    // `&str` chunks of at most `chunk` bytes, cut at char boundaries (as an LLM
                    // client hands out tokens).
                    let mut p = StreamParser::new(config);
                    let mut k = 0;
                    for c in corpus::str_tokens(input, chunk) {
                        k += p.update(c).unwrap().count();
                    }
                    k + p.finish().unwrap().count()
                }
                _ => {
                    let mut p = StreamParser::new(config);
                    let mut k = 0;
                    for c in input.as_bytes().chunks(chunk) {
                        k += p.update_bytes(c).unwrap().count();
                    }
                    k + p.finish().unwrap().count()
                }
            };
        }
        (n, start.elapsed())
    };
    let (n, el) = if threads <= 1 {
        run(&input, &config)
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    s.spawn(|| {
                        let (input, own) = (input.clone(), own_config.then(make_config));
                        run(&input, own.as_ref().unwrap_or(&config))
                    })
                })
                .collect();
            let done: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let n = done.iter().map(|d| d.0).sum();
            (n, done.iter().map(|d| d.1).max().unwrap())
        })
    };
    println!(
        "{n} units, {} bytes, {:.1} MB/s",
        input.len(),
        (input.len() * iters * threads.max(1)) as f64 / el.as_secs_f64() / 1e6
    );
}

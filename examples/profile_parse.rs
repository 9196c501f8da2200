//! Profiling helper: parses a generated corpus N times (`cargo run --release --example
//! profile_parse -- SHAPE SIZE ITERS [CHUNK]`).
use kindaxml_stream::{parse, Config, Strategy, StreamParser};

#[path = "../benches/corpus.rs"]
mod corpus;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shape = corpus::Shape::from_name(args.first().map_or("prose", |s| s)).expect("shape");
    let size: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let iters: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let chunk: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let input = corpus::corpus(shape, size, 1);
    let config = if std::env::var("PRESET").as_deref() == Ok("scaling") {
        // The configuration of the scaling benches (benches/throughput.rs).
        Config::default()
            .with_tags(["cite", "note", "todo", "a", "b"])
            .unwrap()
            .with_recovery("note", Strategy::ForwardUntilTag)
            .unwrap()
            .with_max_span_bytes(64 << 10)
            .unwrap()
            .with_autoclose_on_any_tag(shape != corpus::Shape::DeepNest)
    } else {
        Config::kindaxml_compat()
            .with_tags(["cite", "note", "todo"])
            .unwrap()
            .with_recovery("note", Strategy::ForwardUntilTag)
            .unwrap()
    };
    let start = std::time::Instant::now();
    let mut n = 0;
    for _ in 0..iters {
        if chunk == 0 {
            n += parse(&input, &config).segments().len();
        } else {
            let mut p = StreamParser::new(&config);
            for c in input.as_bytes().chunks(chunk) {
                n += p.update_bytes(c).unwrap().count();
            }
            n += p.finish().unwrap().count();
        }
    }
    let el = start.elapsed();
    println!(
        "{n} units, {:.1} MB/s",
        (size * iters) as f64 / el.as_secs_f64() / 1e6
    );
}

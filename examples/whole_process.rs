//! Bench helper: one whole process that reads FILE and prints only counts, as the
//! performance issue measured its baselines ("whole process, reading a file and printing
//! only counts"). `MODE` picks the work: `memchr` (count `<`: reading the file and finding
//! every tag start, the floor any parser of the file pays), `kindaxml` (kindaxml 0.1.0's
//! `parse`), `ours` (our `parse()` on one thread). Not a dependency of the library.
//!
//! ```text
//! cargo run --release --example gen_corpus -- prose 1M > /tmp/p1.txt
//! MODE=kindaxml cargo run --release --example whole_process -- /tmp/p1.txt
//! ```

#[path = "../benches/corpus.rs"]
mod corpus;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: whole_process FILE")?;
    let mode = std::env::var("MODE").unwrap_or_else(|_| "memchr".into());
    let input = std::fs::read_to_string(&path)?;
    let n = match mode.as_str() {
        "memchr" => memchr::memchr_iter(b'<', input.as_bytes()).count(),
        "kindaxml" => kindaxml::parse(&input, &corpus::kindaxml_config())
            .segments
            .len(),
        "ours" => kindaxml_stream::parse(&input, &corpus::compat_config())
            .segments()
            .len(),
        other => return Err(format!("unknown MODE {other}").into()),
    };
    println!("{{\"bytes\":{},\"count\":{n}}}", input.len());
    Ok(())
}

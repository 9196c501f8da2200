//! Bench helper: reads an XML file with quick-xml's streaming Reader and counts events —
//! the whole-process baseline `kxml --format count` is compared with (BENCHMARKS.md).
//! Not a dependency of the library.
//!
//! ```text
//! cargo run --release --example gen_corpus -- prose_well_formed 100M > /tmp/wf.xml
//! cargo run --release --example quickxml_count -- /tmp/wf.xml
//! ```

use std::io::BufReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: quickxml_count FILE")?;
    let file = std::fs::File::open(&path)?;
    let mut reader = quick_xml::Reader::from_reader(BufReader::with_capacity(64 << 10, file));
    let mut buf = Vec::new();
    let (mut events, mut text_bytes) = (0u64, 0u64);
    loop {
        match reader.read_event_into(&mut buf)? {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Text(t) => {
                text_bytes += t.len() as u64;
                events += 1;
            }
            _ => events += 1,
        }
        buf.clear();
    }
    println!("{{\"events\":{events},\"text_bytes\":{text_bytes}}}");
    Ok(())
}

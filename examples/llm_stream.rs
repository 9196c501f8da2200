//! A simulated LLM streams a bundled answer as 1–6 byte tokens with small delays; each
//! finalized segment is printed the moment it is final, styled by its annotations, then a
//! summary.
//!
//! ```text
//! cargo run --example llm_stream --features stream
//! NO_COLOR=1 cargo run --example llm_stream --features stream   # plain text
//! ```

use std::io::Write;
use std::time::{Duration, Instant};

use futures::{stream, StreamExt};
use kindaxml_stream::{Annotation, Config, Event, KindaxmlStreamExt, Strategy};

const ANSWER: &str = include_str!("data/answer.txt");

/// Deterministic 1–6 byte tokens (split anywhere, even inside a character).
fn tokens(text: &str) -> Vec<Vec<u8>> {
    let mut seed: u64 = 0x5EED;
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let n = 1 + (seed >> 33) as usize % 6;
        let j = (i + n).min(bytes.len());
        out.push(bytes[i..j].to_vec());
        i = j;
    }
    out
}

struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn label(a: &Annotation) -> String {
        let attrs: Vec<String> = a
            .attrs()
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(v) => format!("{k}={v}"),
                None => k.to_string(),
            })
            .collect();
        if attrs.is_empty() {
            a.tag().to_string()
        } else {
            format!("{} {}", a.tag(), attrs.join(" "))
        }
    }

    fn segment(&self, text: &str, anns: &[Annotation]) -> String {
        let Some(inner) = anns.last() else {
            return text.to_string();
        };
        let code = match inner.tag() {
            "cite" => "4;36",
            "note" => "33",
            "think" => "2;3",
            _ => "35",
        };
        let tags: Vec<String> = anns.iter().map(Style::label).collect();
        format!(
            "{}{}",
            self.paint(code, text),
            self.paint("2", &format!("⟨{}⟩", tags.join(", ")))
        )
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::default()
        .with_tags(["cite", "note", "todo"])?
        .with_recovery("note", Strategy::ForwardUntilTag)?
        .with_raw_tags(["think"])?;
    let style = Style {
        color: std::env::var_os("NO_COLOR").is_none(),
    };
    let delay = Duration::from_millis(
        std::env::var("DELAY_MS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3),
    );
    // The "LLM": tokens with a pause before each.
    let llm = stream::iter(tokens(ANSWER)).then(move |t| async move {
        tokio::time::sleep(delay).await;
        t
    });

    let start = Instant::now();
    let (mut segments, mut markers, mut cites, mut bytes) = (0, 0, 0, 0);
    let mut events = Box::pin(llm.kindaxml(&config));
    let mut out = std::io::stdout().lock();
    while let Some(event) = events.next().await {
        match event? {
            Event::Text(seg) => {
                segments += 1;
                bytes += seg.text().len();
                cites += seg
                    .annotations()
                    .iter()
                    .filter(|a| a.tag() == "cite")
                    .count();
                write!(out, "{}", style.segment(seg.text(), seg.annotations()))?;
            }
            Event::Marker(m) => {
                markers += 1;
                write!(
                    out,
                    "{}",
                    style.paint("7;35", &format!("[{}]", Style::label(m.annotation())))
                )?;
            }
        }
        out.flush()?;
    }
    writeln!(
        out,
        "\n\n{} tokens, {segments} segment events, {markers} markers, {cites} cited segments, \
         {bytes} bytes of text in {:.2?}",
        tokens(ANSWER).len(),
        start.elapsed()
    )?;
    Ok(())
}

//! Reads the `<llmResponse>` contract of seed 001 from a simulated token stream into typed
//! structs, with fail-fast validation (SPEC §8 E4).
//!
//! ```text
//! cargo run --example llm_response
//! ```
//!
//! First the seed's valid example arrives as tokens of 1–6 bytes (a fixed pseudo-random
//! split): the answer is printed as soon as each piece of it is final, then the typed result.
//! Then malformed variants — what LLMs really emit — each end in `recovered: …` (KindaXML's
//! deterministic recovery repaired it; the notes say how) or `rejected: …` (a typed error
//! naming the element, attribute and byte offset).
//!
//! The reusable part (config, typed structs, errors, the streaming reader) is
//! `contract.rs`, which `tests/llm_response.rs` and `benches/llm_response.rs` include too.

mod contract;

use std::io::Write;

use contract::{read_response, ResponseReader, Validated};

/// The valid example of seed 001, §2.
const SEED_EXAMPLE: &str = include_str!("seed_example.xml");

/// A small deterministic generator (SplitMix64) for the token sizes.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Splits `input` into tokens of 1–6 bytes (never inside a character).
fn tokens(input: &str, seed: u64) -> Vec<&str> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let mut end = (at + 1 + (rng.next() % 6) as usize).min(input.len());
        while !input.is_char_boundary(end) {
            end += 1;
        }
        out.push(&input[at..end]);
        at = end;
    }
    out
}

/// The malformed variants, each made from the seed's example by one edit.
fn variants() -> Vec<(&'static str, String)> {
    let ex = SEED_EXAMPLE;
    let summary_start = ex
        .find("<summaryUpdate>")
        .expect("the example has a summary");
    let summary_end = ex
        .find("</summaryUpdate>")
        .expect("the example has a summary");
    let extra_keyword = "      <keyword term=\"savings-rate\" confidence=\"0.70\" />\n";
    let four_subjects = {
        let subject = &ex[ex.find("    <subject").unwrap()..ex.find("    <summaryUpdate").unwrap()];
        ex.replacen(subject, &subject.repeat(4), 1)
    };
    vec![
        (
            "missing </keyword> closers",
            ex.replace("\" />", "\">"),
        ),
        (
            "bare & in text (seed 003)",
            ex.replace("For college savings,", "Per AT&T & co., for college savings,"),
        ),
        (
            "&& in text (seed 003)",
            ex.replace("For college savings,", "If a && b, then for college savings,"),
        ),
        (
            "escaped &amp; in text and an attribute",
            ex.replace("For college savings,", "Tax &amp; fees: for college savings,")
                .replace("tax-advantages", "tax &amp; fees"),
        ),
        (
            "broken quote at the end of a tag",
            ex.replace("isNew=\"true\">", "isNew=\"true>"),
        ),
        (
            "broken quote in the middle of a tag",
            ex.replace("name=\"college-savings\"", "name=\"college-savings"),
        ),
        (
            "unclosed <summaryUpdate> at end of stream",
            ex[..summary_end].to_string(),
        ),
        (
            "missing </response>",
            ex.replace("</response>", ""),
        ),
        (
            "unknown <b> inside the response",
            ex.replace("For college savings,", "<b>For college savings</b>,"),
        ),
        (
            "prompt-template comment echoed",
            ex.replace(
                "    </subject>",
                "      <!-- Include 3-7 keywords per subject, e.g. <keyword term=\"x\" confidence=\"0.8\" /> -->\n    </subject>",
            ),
        ),
        (
            "confidence 1.5",
            ex.replace("confidence=\"0.85\"", "confidence=\"1.5\""),
        ),
        (
            "confidence high",
            ex.replace("confidence=\"0.85\"", "confidence=\"high\""),
        ),
        ("four subjects", four_subjects),
        (
            "eleven keywords",
            ex.replace(
                "    </subject>",
                &format!("{}    </subject>", extra_keyword.repeat(7)),
            ),
        ),
        (
            "missing isNew",
            ex.replace(" isNew=\"true\"", ""),
        ),
        (
            "empty <response>",
            ex.replace(
                &ex[ex.find("<response>").unwrap()..ex.find("</response>").unwrap()],
                "<response>  ",
            ),
        ),
        (
            "preamble before the root",
            format!("Sure! Here is my answer in the requested format:\n{ex}"),
        ),
        (
            "missing <summaryUpdate>",
            format!("{}{}", &ex[..summary_start], &ex[summary_end + "</summaryUpdate>".len()..]),
        ),
    ]
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn describe(result: &Result<Validated, contract::ResponseError>) -> String {
    match result {
        Ok(v) => {
            let keywords: usize = v.value.subjects.iter().map(|s| s.keywords.len()).sum();
            let mut out = format!(
                "recovered: response {:?}, {} subject(s), {} keyword(s), summary {:?}",
                short(&v.value.response, 48),
                v.value.subjects.len(),
                keywords,
                short(&v.value.summary_update, 24),
            );
            if let Some(s) = v.value.subjects.first() {
                let terms: Vec<String> = s
                    .keywords
                    .iter()
                    .map(|k| format!("{}={}", k.term, k.confidence))
                    .collect();
                out += &format!(
                    "\n    subject {:?} isNew={} keywords [{}]",
                    s.name,
                    s.is_new,
                    terms.join(", ")
                );
            }
            for r in &v.recoveries {
                out += &format!("\n    note: {r}");
            }
            out
        }
        Err(e) => format!("rejected: {e}"),
    }
}

fn main() {
    let toks = tokens(SEED_EXAMPLE, 0x5EED_0001);
    println!(
        "== streaming the seed's example ({} bytes) as {} tokens of 1-6 bytes\n",
        SEED_EXAMPLE.len(),
        toks.len()
    );
    let mut reader = ResponseReader::new();
    let mut stdout = std::io::stdout();
    let mut last_piece = 0;
    print!("response> ");
    for (i, tok) in toks.iter().enumerate() {
        let shown = reader.update(tok);
        if !shown.is_empty() {
            print!("{shown}");
            stdout.flush().ok();
            last_piece = i + 1;
        }
    }
    println!(
        "\n\n(the answer was complete after token {last_piece} of {}, before the analysis arrived)\n",
        toks.len()
    );
    match reader.finish() {
        Ok(v) => {
            println!("{:#?}", v.value);
            println!("recovery notes: {}", v.recoveries.len());
            for r in &v.recoveries {
                println!("  {r}");
            }
        }
        Err(e) => println!("rejected: {e}"),
    }

    println!("\n== malformed variants\n");
    for (name, input) in variants() {
        println!("{name}\n  {}", describe(&read_response(&input)));
    }
}

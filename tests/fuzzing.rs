//! Regression tests for inputs the fuzzers found (`fuzz/`), named `fuzz_NNN`. Each runs
//! one-shot and under every 2-way split.

mod common;

use common::{run_bytes, split_at};
use kindaxml_stream::{parse, Config, Declarations};

fn every_split(config: &Config, input: &str) {
    let want = parse(input, config);
    for i in 0..=input.len() {
        assert_eq!(
            run_bytes(config, &split_at(input.as_bytes(), &[i])),
            want,
            "split {i}"
        );
    }
}

/// chunked target, crash-280b07181aedcbbf: a declaration in drop mode that runs past
/// `max_tag_bytes` in the middle of a multi-byte character sliced the input off a char
/// boundary (panic). It must become text: literal `<`, the rest parsed as usual.
#[test]
fn fuzz_001_declaration_limit_inside_a_multibyte_char() {
    let config = Config::default()
        .with_declarations(Declarations::Drop)
        .with_max_tag_bytes(7)
        .unwrap();
    let doc = parse("<!--ab߰ cd", &config);
    assert_eq!(doc.text(), "<!--ab߰ cd");
    every_split(&config, "<!--ab߰ cd");
    every_split(&config, "x<?ab߰?>y");
    every_split(&config, "<!DOCTYPE߰>");
}

//! TagMatcher (E3): XmlMatcher's nine upstream cases and the split regressions other projects
//! shipped bugs on. Every case also runs under every 2-way split (as bytes) and must give
//! the same merged pieces as one shot.

use kindaxml_stream::{MatchChunk, TagMatcher};

fn m(matched: bool, data: &str) -> MatchChunk {
    MatchChunk {
        matched,
        data: data.into(),
    }
}

/// Merges adjacent pieces with the same flag (how a consumer reads the stream).
fn merged(chunks: Vec<MatchChunk>) -> Vec<MatchChunk> {
    let mut out: Vec<MatchChunk> = Vec::new();
    for c in chunks {
        match out.last_mut() {
            Some(l) if l.matched == c.matched => l.data.push_str(&c.data),
            _ => out.push(c),
        }
    }
    out
}

fn matcher(leading: bool) -> TagMatcher {
    if leading {
        TagMatcher::leading(["think"]).unwrap()
    } else {
        TagMatcher::new(["think"]).unwrap()
    }
}

/// Runs `chunks` and returns every piece per call (finish last).
fn per_call(leading: bool, chunks: &[&str]) -> Vec<Vec<MatchChunk>> {
    let mut t = matcher(leading);
    let mut out: Vec<Vec<MatchChunk>> = chunks.iter().map(|c| t.update(c).unwrap()).collect();
    out.push(t.finish().unwrap());
    out
}

/// One shot equals `want` (merged), and so does every 2-way byte split.
fn check(leading: bool, input: &str, want: &[MatchChunk]) {
    let one: Vec<MatchChunk> = per_call(leading, &[input]).into_iter().flatten().collect();
    assert_eq!(merged(one), want, "one shot: {input:?}");
    let bytes = input.as_bytes();
    for i in 0..=bytes.len() {
        let mut t = matcher(leading);
        let mut got = t.update_bytes(&bytes[..i]).unwrap();
        got.extend(t.update_bytes(&bytes[i..]).unwrap());
        got.extend(t.finish().unwrap());
        assert!(
            got.iter().all(|c| !c.data.is_empty()),
            "empty piece at split {i}"
        );
        assert_eq!(merged(got), want, "split at {i}: {input:?}");
    }
}

// ---- XmlMatcher's upstream cases (position 0 = leading-block mode) ----

#[test]
fn upstream_match_at_position_0() {
    check(true, "<think>data</think>", &[m(true, "data")]);
}

#[test]
fn upstream_whitespace_in_tag_is_text_by_d1() {
    // Upstream matches `< think >`; SPEC D1 makes whitespace after `<` text.
    check(
        true,
        "< think >data</ think >",
        &[m(false, "< think >data</ think >")],
    );
    check(
        false,
        "< think >data</ think >",
        &[m(false, "< think >data</ think >")],
    );
}

#[test]
fn upstream_invalid_tag() {
    check(
        true,
        "< think 1>data</ think >",
        &[m(false, "< think 1>data</ think >")],
    );
}

#[test]
fn upstream_anonymous_tag() {
    check(true, "<>data</>", &[m(false, "<>data</>")]);
    check(false, "<>data</>", &[m(false, "<>data</>")]);
}

#[test]
fn upstream_streaming_push() {
    let calls = per_call(true, &["<thi", "nk", ">dat", "a</", "think>"]);
    assert_eq!(
        calls,
        vec![
            vec![],
            vec![],
            vec![m(true, "dat")],
            vec![m(true, "a")],
            vec![],
            vec![]
        ]
    );
}

#[test]
fn upstream_nested_tag() {
    check(
        true,
        "<think>X<think>Y</think>Z</think>",
        &[m(true, "X<think>Y</think>Z")],
    );
}

#[test]
fn upstream_nested_invalid_close() {
    // `</thxink>` is not the tag: depth stays 2, so the last `</think>` only returns to
    // depth 1 and the block runs to the end. Upstream returns the same text in two pieces.
    check(
        true,
        "<think>X<think>Y</thxink>Z</think>",
        &[m(true, "X<think>Y</thxink>Z</think>")],
    );
}

#[test]
fn upstream_wrong_position_in_leading_mode() {
    check(
        true,
        "1<think>data</think>",
        &[m(false, "1<think>data</think>")],
    );
    // Anywhere mode finds it.
    check(
        false,
        "1<think>data</think>",
        &[m(false, "1"), m(true, "data")],
    );
}

#[test]
fn upstream_unclosed_tag() {
    check(true, "<think>data", &[m(true, "data")]);
    check(false, "<think>data", &[m(true, "data")]);
}

// ---- split regressions ----

#[test]
fn end_tag_split_inside_its_name() {
    let calls = per_call(true, &["<think>reasoning</th", "ink>answer"]);
    assert_eq!(
        calls,
        vec![vec![m(true, "reasoning")], vec![m(false, "answer")], vec![]]
    );
    check(
        false,
        "<think>reasoning</think>answer",
        &[m(true, "reasoning"), m(false, "answer")],
    );
}

#[test]
fn start_tag_split_after_preface() {
    let calls = per_call(false, &["preface <th", "ink>reasoning</think>answer"]);
    assert_eq!(
        calls,
        vec![
            vec![m(false, "preface ")],
            vec![m(true, "reasoning"), m(false, "answer")],
            vec![]
        ]
    );
}

#[test]
fn unknown_tag_in_three_pieces_is_byte_exact() {
    let calls = per_call(false, &["<", "my-tag", ">"]);
    assert_eq!(
        merged(calls.into_iter().flatten().collect()),
        [m(false, "<my-tag>")]
    );
}

#[test]
fn trailing_lt_is_not_lost() {
    let calls = per_call(false, &["the answer is 5 <"]);
    assert_eq!(
        calls,
        vec![vec![m(false, "the answer is 5 ")], vec![m(false, "<")]]
    );
    let calls = per_call(false, &["answer: <th"]);
    assert_eq!(
        calls,
        vec![vec![m(false, "answer: ")], vec![m(false, "<th")]]
    );
}

#[test]
fn empty_block_stays_balanced() {
    check(
        false,
        "<think>Reason.</think>Before.<think></think>After.",
        &[m(true, "Reason."), m(false, "Before.After.")],
    );
}

#[test]
fn tag_quoted_in_backticks_is_literal() {
    check(
        false,
        "Use `<think>` to reason.",
        &[m(false, "Use `<think>` to reason.")],
    );
    check(
        false,
        "```\n<think>x</think>\n```\n<think>y</think>",
        &[m(false, "```\n<think>x</think>\n```\n"), m(true, "y")],
    );
}

#[test]
fn aliases_and_leading_block_then_text() {
    let mut t = TagMatcher::leading(["think", "thinking", "reasoning"]).unwrap();
    let mut got = t
        .update("<thinking>plan</think> then <think>not matched</think>")
        .unwrap();
    got.extend(t.finish().unwrap());
    assert_eq!(
        merged(got),
        [
            m(true, "plan"),
            m(false, " then <think>not matched</think>")
        ]
    );
}

#[test]
fn matched_content_streams_immediately() {
    // Byte-exact and untrimmed: leading whitespace does not hold the block back.
    let calls = per_call(
        false,
        &["<think>\n  step one", "\nstep two\n", "</think>done"],
    );
    assert_eq!(
        calls,
        vec![
            vec![m(true, "\n  step one")],
            vec![m(true, "\nstep two\n")],
            vec![m(false, "done")],
            vec![]
        ]
    );
}

#[test]
fn bad_names_are_errors() {
    assert!(TagMatcher::new(Vec::<&str>::new()).is_err());
    assert!(TagMatcher::new(["<think>"]).is_err());
}

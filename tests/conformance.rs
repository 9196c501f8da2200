//! Conformance: runs every case in `tests/cases/*.txt` (format: `tests/cases/README.md`).
//!
//! Each case is checked one-shot against its expected segments and markers, then under every
//! 2-way split, every 3-way split (short inputs), 1-byte and 1-char chunks and seeded random
//! chunkings, as bytes and as `&str`: every way must give the same document as `parse()`.
//! Cases with `update:` lines also pin exactly which events each call emits (promptness).
//!
//! Usage: `cargo test --all-features --test conformance [-- FILTER]`; `KXS_SEED=n` changes
//! the random chunkings.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use kindaxml_stream::{parse, Annotation, AttrValue, Close, Config, Document, Event, StreamParser};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
struct ExpAnn {
    tag: String,
    attrs: BTreeMap<String, Vec<Value>>,
    reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
enum ExpEvent {
    Seg(String, Vec<ExpAnn>),
    Marker(usize, ExpAnn),
}

/// One call of a promptness case.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    /// `update:` (`StreamParser::update`).
    Text(String),
    /// `update-hex:` (`StreamParser::update_bytes`): a byte chunk, which may split a
    /// character.
    Bytes(Vec<u8>),
    Finish,
}

#[derive(Debug, Default)]
struct Case {
    file: String,
    line: usize,
    name: String,
    config: Option<Value>,
    input: Option<String>,
    /// Canonical expectation (when there are no `update:` lines).
    expected: Vec<ExpEvent>,
    empty: bool,
    /// Promptness: per call, the chunk and its exact events.
    calls: Vec<(Call, Vec<ExpEvent>)>,
    /// `emitted:` lines: after call `k`, every annotation of `tag` emitted so far says how
    /// its tag closed (`reason`, or `open`).
    known: Vec<(usize, String, String)>,
    /// `pending:` lines: after call `k`, `pending_input_bytes()`.
    pending: Vec<(usize, usize)>,
}

fn parse_json_prefix(s: &str) -> Result<(Value, &str), String> {
    let mut de = serde_json::Deserializer::from_str(s).into_iter::<Value>();
    let v = de
        .next()
        .ok_or("expected a JSON value")?
        .map_err(|e| e.to_string())?;
    let used = de.byte_offset();
    Ok((v, &s[used..]))
}

/// `[tag a=1 b="x y" c; tag2 @reason]`
fn parse_anns(s: &str) -> Result<Vec<ExpAnn>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let inner = s
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(|| format!("annotations must be in [...]: {s}"))?;
    let mut out = Vec::new();
    let mut rest = inner.trim_start();
    while !rest.is_empty() {
        let tag_end = rest
            .find(|c: char| c.is_whitespace() || c == ';')
            .unwrap_or(rest.len());
        let tag = rest[..tag_end].to_string();
        rest = &rest[tag_end..];
        let mut attrs: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let mut reason = None;
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                break;
            }
            if let Some(r) = rest.strip_prefix(';') {
                rest = r.trim_start();
                break;
            }
            if let Some(r) = rest.strip_prefix('@') {
                let e = r
                    .find(|c: char| c.is_whitespace() || c == ';')
                    .unwrap_or(r.len());
                reason = Some(r[..e].to_string());
                rest = &r[e..];
                continue;
            }
            let e = rest
                .find(|c: char| c.is_whitespace() || c == ';' || c == '=')
                .unwrap_or(rest.len());
            let name = rest[..e].to_string();
            rest = &rest[e..];
            let values = if let Some(r) = rest.strip_prefix('=') {
                if r.starts_with('"') || r.starts_with('[') {
                    let (v, r2) = parse_json_prefix(r)?;
                    rest = r2;
                    match v {
                        Value::Array(a) => a,
                        v => vec![v],
                    }
                } else {
                    let e = r
                        .find(|c: char| c.is_whitespace() || c == ';')
                        .unwrap_or(r.len());
                    let v = Value::String(r[..e].to_string());
                    rest = &r[e..];
                    vec![v]
                }
            } else {
                vec![Value::Bool(true)]
            };
            attrs.insert(name, values);
        }
        out.push(ExpAnn { tag, attrs, reason });
    }
    Ok(out)
}

fn parse_event(kind: &str, rest: &str) -> Result<ExpEvent, String> {
    match kind {
        "seg" => {
            let (v, r) = parse_json_prefix(rest.trim_start())?;
            let text = v
                .as_str()
                .ok_or("seg text must be a JSON string")?
                .to_string();
            Ok(ExpEvent::Seg(text, parse_anns(r)?))
        }
        "marker" => {
            let rest = rest.trim_start();
            let e = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let pos: usize = rest[..e].parse().map_err(|_| "marker needs a position")?;
            let mut anns = parse_anns(&rest[e..])?;
            if anns.len() != 1 {
                return Err("marker needs exactly one annotation".into());
            }
            Ok(ExpEvent::Marker(pos, anns.remove(0)))
        }
        _ => unreachable!(),
    }
}

fn merge_objects(base: &Value, over: &Value) -> Value {
    let mut b = base.as_object().cloned().unwrap_or_default();
    if let Some(o) = over.as_object() {
        for (k, v) in o {
            b.insert(k.clone(), v.clone());
        }
    }
    Value::Object(b)
}

fn load_cases(path: &Path) -> Result<Vec<Case>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    let mut named: BTreeMap<String, Value> = BTreeMap::new();
    named.insert("default".into(), serde_json::json!({}));
    named.insert(
        "compat".into(),
        serde_json::json!({"preset": "kindaxml_compat"}),
    );
    let mut cases: Vec<Case> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let err = |m: String| format!("{file}:{line_no}: {m}");
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        if let Some(def) = raw.strip_prefix("config ") {
            let (name, json) = def
                .split_once(" = ")
                .ok_or_else(|| err("expected `config NAME = {json}`".into()))?;
            let v: Value = serde_json::from_str(json).map_err(|e| err(e.to_string()))?;
            named.insert(name.trim().to_string(), v);
            continue;
        }
        if let Some(name) = raw.strip_prefix("== ") {
            cases.push(Case {
                file: file.clone(),
                line: line_no,
                name: name.trim().to_string(),
                ..Case::default()
            });
            continue;
        }
        let case = cases
            .last_mut()
            .ok_or_else(|| err("line outside a case".into()))?;
        let (key, rest) = match raw.split_once(':') {
            Some((k, r)) if !k.contains(' ') => (k, r),
            _ => (raw.trim(), ""),
        };
        match key {
            "config" => {
                let rest = rest.trim();
                let v = if rest.starts_with('{') {
                    serde_json::from_str(rest).map_err(|e| err(e.to_string()))?
                } else {
                    let (name, over) = match rest.split_once(" + ") {
                        Some((a, b)) => (a.trim(), Some(b)),
                        None => (rest, None),
                    };
                    let base = named
                        .get(name)
                        .ok_or_else(|| err(format!("unknown config `{name}`")))?;
                    match over {
                        Some(o) => {
                            let o: Value =
                                serde_json::from_str(o).map_err(|e| err(e.to_string()))?;
                            merge_objects(base, &o)
                        }
                        None => base.clone(),
                    }
                };
                case.config = Some(v);
            }
            "input" => case.input = Some(rest.strip_prefix(' ').unwrap_or(rest).to_string()),
            "input-json" => {
                let v: Value = serde_json::from_str(rest.trim()).map_err(|e| err(e.to_string()))?;
                case.input = Some(
                    v.as_str()
                        .ok_or_else(|| err("input-json must be a string".into()))?
                        .to_string(),
                );
            }
            "update" => {
                let v: Value = serde_json::from_str(rest.trim()).map_err(|e| err(e.to_string()))?;
                let chunk = v
                    .as_str()
                    .ok_or_else(|| err("update must be a JSON string".into()))?;
                case.calls.push((Call::Text(chunk.to_string()), Vec::new()));
            }
            "update-hex" => {
                let bytes = rest
                    .split_whitespace()
                    .map(|h| u8::from_str_radix(h, 16))
                    .collect::<Result<Vec<u8>, _>>()
                    .map_err(|e| err(format!("update-hex takes hex bytes: {e}")))?;
                case.calls.push((Call::Bytes(bytes), Vec::new()));
            }
            "finish" => case.calls.push((Call::Finish, Vec::new())),
            "empty" => case.empty = true,
            "seg" | "marker" => {
                let ev = parse_event(key, rest).map_err(err)?;
                match case.calls.last_mut() {
                    Some((_, evs)) => evs.push(ev),
                    None => case.expected.push(ev),
                }
            }
            "nothing" => {
                if case.calls.is_empty() {
                    return Err(err("`nothing` belongs after update:/finish".into()));
                }
            }
            "emitted" => {
                let (tag, reason) = rest
                    .trim()
                    .split_once(" @")
                    .ok_or_else(|| err("emitted: takes `tag @reason`".into()))?;
                let k = case
                    .calls
                    .len()
                    .checked_sub(1)
                    .ok_or_else(|| err("`emitted` belongs after update:/finish".into()))?;
                case.known
                    .push((k, tag.trim().to_string(), reason.trim().to_string()));
            }
            "pending" => {
                let n = rest
                    .trim()
                    .parse()
                    .map_err(|e| err(format!("pending: takes a byte count: {e}")))?;
                let k = case
                    .calls
                    .len()
                    .checked_sub(1)
                    .ok_or_else(|| err("`pending` belongs after update:/finish".into()))?;
                case.pending.push((k, n));
            }
            other => return Err(err(format!("unknown line kind `{other}`"))),
        }
    }
    for c in &mut cases {
        if !c.calls.is_empty() {
            if c.input.is_some() {
                return Err(format!(
                    "{}:{}: promptness cases take their input from update: lines",
                    c.file, c.line
                ));
            }
            let bytes: Vec<u8> = c
                .calls
                .iter()
                .flat_map(|(call, _)| match call {
                    Call::Text(t) => t.as_bytes(),
                    Call::Bytes(b) => b.as_slice(),
                    Call::Finish => &[],
                })
                .copied()
                .collect();
            c.input = Some(String::from_utf8(bytes).map_err(|_| {
                format!(
                    "{}:{}: the update chunks do not join to UTF-8",
                    c.file, c.line
                )
            })?);
            if c.calls
                .last()
                .is_some_and(|(call, _)| *call != Call::Finish)
            {
                c.calls.push((Call::Finish, Vec::new()));
            }
        } else if c.expected.is_empty() && !c.empty {
            return Err(format!(
                "{}:{}: case `{}` expects nothing: write `empty` or seg: lines",
                c.file, c.line, c.name
            ));
        }
        if c.input.is_none() || c.config.is_none() {
            return Err(format!(
                "{}:{}: case `{}` needs config: and input:",
                c.file, c.line, c.name
            ));
        }
    }
    Ok(cases)
}

fn reason_name(c: Option<Close>) -> &'static str {
    let Some(c) = c else { return "open" };
    match c {
        Close::EndTag { .. } => "end_tag",
        Close::Reopened { .. } => "reopened",
        Close::AutoClosed { .. } => "auto",
        Close::EndOfInput => "eof",
        Close::SpanLimit => "limit",
        Close::SelfClosing => "marker",
        _ => "?",
    }
}

fn ann_matches(a: &Annotation, e: &ExpAnn) -> bool {
    if a.tag() != e.tag {
        return false;
    }
    let mut got: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (n, v) in a.attrs().iter() {
        got.entry(n.to_string()).or_default().push(match v {
            AttrValue::Str(s) => Value::String(s.to_string()),
            AttrValue::True => Value::Bool(true),
        });
    }
    got == e.attrs
        && e.reason
            .as_ref()
            .is_none_or(|r| r == reason_name(a.close()))
}

fn show_ann(a: &Annotation) -> String {
    let mut s = a.tag().to_string();
    for (n, v) in a.attrs().iter() {
        match v {
            AttrValue::Str(x) => s += &format!(" {n}={x:?}"),
            _ => s += &format!(" {n}"),
        }
    }
    s + &format!(" @{}", reason_name(a.close()))
}

fn show_events(evs: &[Event]) -> String {
    evs.iter()
        .map(|e| match e {
            Event::Text(s) => format!(
                "    seg: {:?} [{}]",
                s.text(),
                s.annotations()
                    .iter()
                    .map(show_ann)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Event::Marker(m) => format!("    marker: {} [{}]", m.pos(), show_ann(m.annotation())),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn events_match(got: &[Event], want: &[ExpEvent]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| match (g, w) {
            (Event::Text(s), ExpEvent::Seg(t, anns)) => {
                s.text() == t
                    && s.annotations().len() == anns.len()
                    && s.annotations()
                        .iter()
                        .zip(anns)
                        .all(|(a, e)| ann_matches(a, e))
            }
            (Event::Marker(m), ExpEvent::Marker(p, e)) => {
                m.pos() == *p && ann_matches(m.annotation(), e)
            }
            _ => false,
        })
}

fn doc_events(d: &Document) -> Vec<Event> {
    // Canonical segments then markers (the harness compares the two lists separately).
    let mut v: Vec<Event> = d.segments().iter().cloned().map(Event::Text).collect();
    v.extend(d.markers().iter().cloned().map(Event::Marker));
    v
}

/// How a failure names call `k` of a promptness case.
fn call_name(k: usize, call: &Call) -> String {
    match call {
        Call::Text(c) => format!("update #{} ({c:?})", k + 1),
        Call::Bytes(b) => format!("update #{} (bytes {b:02x?})", k + 1),
        Call::Finish => "finish".to_string(),
    }
}

fn run_case(case: &Case, seed: u64) -> Result<(), String> {
    let config = Config::from_json_value(case.config.as_ref().unwrap())
        .map_err(|e| format!("config: {e}"))?;
    let input = case.input.as_deref().unwrap();
    let doc = parse(input, &config);
    // The benchmarks' floor (DESIGN.md, decision 115) must build this same document.
    let floor = doc.rebuilt();
    if floor != doc || floor.len() != doc.len() {
        return Err(format!(
            "Document::rebuilt differs from parse():\n got  {floor:?}\n want {doc:?}"
        ));
    }
    if case.calls.is_empty() {
        let mut want: Vec<ExpEvent> = case
            .expected
            .iter()
            .filter(|e| matches!(e, ExpEvent::Seg(..)))
            .cloned()
            .collect();
        want.extend(
            case.expected
                .iter()
                .filter(|e| matches!(e, ExpEvent::Marker(..)))
                .cloned(),
        );
        let got = doc_events(&doc);
        if !events_match(&got, &want) {
            return Err(format!(
                "one-shot parse differs; got:\n{}",
                show_events(&got)
            ));
        }
    } else {
        let mut p = StreamParser::new(&config);
        let mut per_call = Vec::new();
        // Every annotation emitted so far: one emitted while its tag is open learns later
        // how it closed, and `emitted:` lines pin in which call.
        let mut out: Vec<Annotation> = Vec::new();
        for (k, (chunk, _)) in case.calls.iter().enumerate() {
            let what = call_name(k, chunk);
            let got: Vec<Event> = match chunk {
                Call::Text(c) => p.update(c),
                Call::Bytes(b) => p.update_bytes(b),
                Call::Finish => p.finish(),
            }
            .map_err(|e| format!("{what}: {e}"))?
            .collect();
            out.extend(got.iter().flat_map(|e| match e {
                Event::Text(s) => s.annotations().to_vec(),
                Event::Marker(m) => vec![m.annotation().clone()],
            }));
            for (_, tag, reason) in case.known.iter().filter(|(i, ..)| *i == k) {
                let mine: Vec<&Annotation> = out.iter().filter(|a| a.tag() == tag).collect();
                if mine.is_empty() || mine.iter().any(|a| reason_name(a.close()) != reason) {
                    let says: Vec<String> = mine.iter().map(|a| show_ann(a)).collect();
                    return Err(format!("after {what}, {tag} emitted so far: {says:?}"));
                }
            }
            for &(_, n) in case.pending.iter().filter(|(i, _)| *i == k) {
                let got = p.pending_input_bytes();
                if got != n {
                    return Err(format!("after {what}, {got} input bytes pending, not {n}"));
                }
            }
            per_call.push(got);
        }
        // Events (and their `@reason`s, which read how tags closed in the end) after all calls.
        for (k, ((chunk, want), got)) in case.calls.iter().zip(&per_call).enumerate() {
            if !events_match(got, want) {
                let what = call_name(k, chunk);
                return Err(format!("{what} emitted:\n{}", show_events(got)));
            }
        }
        let merged = Document::from_events(per_call.into_iter().flatten());
        if merged != doc {
            return Err(format!(
                "merged events differ from parse():\n got  {merged:?}\n want {doc:?}"
            ));
        }
    }
    let mut rng = common::Rng::new(seed ^ (case.line as u64).wrapping_mul(0x9E37));
    common::check_chunk_invariance(&config, input, &mut rng, 8)
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let seed = common::seed(20261121);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    let (mut passed, mut failed) = (0, 0);
    for f in &files {
        let cases = match load_cases(f) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
                continue;
            }
        };
        for case in cases {
            let id = format!("{}:{} {}", case.file, case.line, case.name);
            if filter
                .as_ref()
                .is_some_and(|flt| !id.contains(flt.as_str()))
            {
                continue;
            }
            match std::panic::catch_unwind(|| run_case(&case, seed)) {
                Ok(Ok(())) => passed += 1,
                Ok(Err(e)) => {
                    failed += 1;
                    eprintln!(
                        "FAIL {id}\n  input: {:?}\n  {e}\n",
                        case.input.as_deref().unwrap_or("")
                    );
                }
                Err(_) => {
                    failed += 1;
                    eprintln!(
                        "PANIC {id}\n  input: {:?}\n",
                        case.input.as_deref().unwrap_or("")
                    );
                }
            }
        }
    }
    println!(
        "conformance: {passed} passed, {failed} failed (seed {seed}, {} files)",
        files.len()
    );
    if failed > 0 || passed == 0 {
        std::process::exit(1);
    }
}

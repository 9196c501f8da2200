//! Attribute parsing (SPEC §2), run once on the text of a complete tag.
//!
//! The tokenizer has already found where the tag ends (its lexer tracks the same quote rule),
//! so this works on a finished `&str`: the text between the name and `>`, with trailing
//! whitespace and a self-closing `/` already removed.

use crate::config::{is_name_char, DuplicateAttrs};
use crate::entity;
use crate::output::{AttrValue, Attrs};
use crate::text::{decode_at, find1, is_ws_byte};
use std::borrow::Cow;
use std::collections::HashMap;

/// Parses `text` into attributes.
///
/// A tag with none (`<note>`, `<todo/>`: `text` is empty) returns at once, without the
/// set-up of the scan (decision 65).
#[inline]
pub(crate) fn parse_attrs(text: &str, decode_entities: bool, dups: DuplicateAttrs) -> Attrs {
    if text.is_empty() {
        return Attrs::new();
    }
    parse_some(text, decode_entities, dups)
}

/// [`parse_attrs`] of a non-empty `text`.
///
/// Between attributes every char that cannot start a name is skipped, whitespace or not
/// (D6); names are ASCII, so that is a byte scan for the next name byte, with no decoding
/// (decision 78). An `=` right after the name is taken without the whitespace scan.
// Bounds: slices start and end at ASCII bytes found by the scans or at b.len(), so they are
// char boundaries (and in range).
#[allow(clippy::string_slice)]
#[inline(never)]
fn parse_some(text: &str, decode_entities: bool, dups: DuplicateAttrs) -> Attrs {
    let mut attrs = Attrs::new();
    // `record`'s hash index of the names kept, once there are more than INDEX_AFTER.
    let mut index: Option<HashMap<Box<str>, usize>> = None;
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        i = scan(b, i, |c| !is_name_char(c));
        if i >= b.len() {
            break;
        }
        let name_start = i;
        i = scan(b, i + 1, is_name_char);
        let name = &text[name_start..i];
        let after_name = match b.get(i) {
            Some(b'=') => i,
            _ => skip_ws(text, i),
        };
        let value = if b.get(after_name) == Some(&b'=') {
            let v = skip_ws(text, after_name + 1);
            match b.get(v) {
                None => {
                    i = v;
                    None
                }
                Some(&q) if q == b'"' || q == b'\'' => {
                    let body = v + 1;
                    let rest = b.get(body..).unwrap_or_default();
                    let close = find1(q, rest).map_or(b.len(), |k| body + k);
                    i = (close + 1).min(b.len());
                    Some(value_text(&text[body..close], decode_entities))
                }
                Some(_) => {
                    let e = skip_non_ws(text, v);
                    i = e;
                    Some(value_text(&text[v..e], decode_entities))
                }
            }
        } else {
            None
        };
        record(&mut attrs, &mut index, name, value, dups);
    }
    attrs
}

/// Keeps `name` with `value` in `attrs` under the duplicate policy `dups`: past
/// `INDEX_AFTER` names, duplicates are found through the hash `index` (a tag may hold 10^5
/// attributes when max_tag_bytes allows it); before, by a scan of what was kept.
#[inline(always)]
fn record(
    attrs: &mut Attrs,
    index: &mut Option<HashMap<Box<str>, usize>>,
    name: &str,
    value: Option<Cow<'_, str>>,
    dups: DuplicateAttrs,
) {
    if dups == DuplicateAttrs::All {
        attrs.push(name, value);
        return;
    }
    let found = match index {
        Some(ix) => ix.get(name).copied(),
        None if attrs.is_empty() => None,
        None => attrs.position(name),
    };
    match found {
        None => {
            if let Some(ix) = index {
                ix.insert(name.into(), attrs.len());
            }
            attrs.push(name, value);
            if index.is_none() && attrs.len() > INDEX_AFTER {
                *index = Some(
                    attrs
                        .iter()
                        .enumerate()
                        .map(|(k, (n, _))| (n.into(), k))
                        .collect(),
                );
            }
        }
        Some(k) if dups == DuplicateAttrs::Last => {
            attrs.set_value_at(
                k,
                value.map_or(AttrValue::True, |v| AttrValue::Str(v.into())),
            );
        }
        Some(_) => {}
    }
}

/// The end of the run of bytes from `i` that `keep` accepts.
#[inline(always)]
fn scan(b: &[u8], mut i: usize, keep: impl Fn(u8) -> bool) -> usize {
    while b.get(i).is_some_and(|&c| keep(c)) {
        i += 1;
    }
    i
}

/// The width of the char at byte `i` of `text` (1 past the end).
#[cfg(test)]
fn char_width(text: &str, i: usize) -> usize {
    match text.as_bytes().get(i) {
        Some(&c) if c >= 0x80 => decode_at(text, i).len_utf8(),
        _ => 1,
    }
}

/// The first byte at or after `i` that does not start a whitespace char.
#[inline(always)]
fn skip_ws(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut i = scan(b, i, is_ws_byte);
    while b.get(i).is_some_and(|&c| c >= 0x80) {
        let c = decode_at(text, i);
        if !c.is_whitespace() {
            break;
        }
        i = scan(b, i + c.len_utf8(), is_ws_byte);
    }
    i
}

/// The first byte at or after `i` that starts a whitespace char (or the end).
#[inline]
fn skip_non_ws(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    let mut i = i;
    loop {
        i = scan(b, i, |c| c < 0x80 && !is_ws_byte(c));
        match b.get(i) {
            Some(&c) if c >= 0x80 => {
                let c = decode_at(text, i);
                if c.is_whitespace() {
                    return i;
                }
                i += c.len_utf8();
            }
            _ => return i,
        }
    }
}

/// Attribute count past which duplicates are found through a hash index.
const INDEX_AFTER: usize = 16;

/// An attribute value's text (`&str` unless references were decoded). The usual value has no
/// `&`, which is looked for here rather than through the decoder's call.
#[inline(always)]
fn value_text(s: &str, decode_entities: bool) -> Cow<'_, str> {
    if decode_entities && find1(b'&', s.as_bytes()).is_some() {
        entity::decode(s)
    } else {
        Cow::Borrowed(s)
    }
}

/// The attribute parser before decision 78 (whitespace and other chars between attributes
/// skipped one char at a time), kept as the oracle `parse_some` is checked against: its
/// scans as they were (the value scan is `parse_some`'s too: sharing it in a function cost
/// `parse()` 0.3%), keeping what it finds with `parse_some`'s `record`.
#[cfg(test)]
// Bounds: slices start and end at ASCII bytes found by the scans or at b.len(), so they are
// char boundaries (and in range).
#[allow(clippy::string_slice)]
fn parse_some_reference(text: &str, decode_entities: bool, dups: DuplicateAttrs) -> Attrs {
    let mut attrs = Attrs::new();
    // `record`'s hash index of the names kept, once there are more than INDEX_AFTER.
    let mut index: Option<HashMap<Box<str>, usize>> = None;
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        i = skip_ws(text, i);
        let Some(&c) = b.get(i) else {
            break;
        };
        if !is_name_char(c) {
            // Any other character between attributes is skipped (D6).
            i += char_width(text, i);
            continue;
        }
        let name_start = i;
        i = scan(b, i, is_name_char);
        let name = &text[name_start..i];
        let after_name = skip_ws(text, i);
        let value = if b.get(after_name) == Some(&b'=') {
            let v = skip_ws(text, after_name + 1);
            match b.get(v) {
                None => {
                    i = v;
                    None
                }
                Some(&q) if q == b'"' || q == b'\'' => {
                    let body = v + 1;
                    let rest = b.get(body..).unwrap_or_default();
                    let close = find1(q, rest).map_or(b.len(), |k| body + k);
                    i = (close + 1).min(b.len());
                    Some(value_text(&text[body..close], decode_entities))
                }
                Some(_) => {
                    let e = skip_non_ws(text, v);
                    i = e;
                    Some(value_text(&text[v..e], decode_entities))
                }
            }
        } else {
            i = after_name;
            None
        };
        record(&mut attrs, &mut index, name, value, dups);
    }
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<(String, Option<String>)> {
        parse_attrs(s, true, DuplicateAttrs::Last)
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_str().map(str::to_string)))
            .collect()
    }

    fn s(n: &str, v: &str) -> (String, Option<String>) {
        (n.into(), Some(v.into()))
    }

    #[test]
    fn forms() {
        assert_eq!(
            p(r#" a="x y" b='z' c=w d"#),
            vec![s("a", "x y"), s("b", "z"), s("c", "w"), ("d".into(), None)]
        );
        assert_eq!(p(" a = 1"), vec![s("a", "1")]);
        assert_eq!(p(" a= "), vec![("a".into(), None)]);
        assert_eq!(
            p(" src=https://x.io/a?b=1"),
            vec![s("src", "https://x.io/a?b=1")]
        );
        assert_eq!(p(" id='1, 2"), vec![s("id", "1, 2")]);
        assert_eq!(p(" a=it's b=2"), vec![s("a", "it's"), s("b", "2")]);
        assert_eq!(p(r#" a="1"b=2"#), vec![s("a", "1"), s("b", "2")]);
        assert_eq!(p(" @x ,y"), vec![("x".into(), None), ("y".into(), None)]);
        assert_eq!(p(" t=&amp;&lt;"), vec![s("t", "&<")]);
        assert_eq!(p("\u{3000}a=1\u{a0}b=2"), vec![s("a", "1"), s("b", "2")]);
    }

    #[test]
    fn long_and_short_strings_on_either_side_of_the_inline_limit() {
        // 22 bytes are stored inline, 23 on the heap; decoded values either way.
        let n22 = "n".repeat(22);
        let n23 = "n".repeat(23);
        let v22 = "v".repeat(22);
        let v23 = "v".repeat(23);
        let input = format!(
            " {n22}={v22} {n23}='{v23}' d=&amp;{v22} e=&lt;{v23} f=&amp;{} g",
            "x".repeat(20)
        );
        assert_eq!(
            p(&input),
            vec![
                s(&n22, &v22),
                s(&n23, &v23),
                s("d", &format!("&{v22}")),
                s("e", &format!("<{v23}")),
                s("f", &format!("&{}", "x".repeat(20))),
                ("g".into(), None),
            ]
        );
        // A later duplicate's value replaces the first, long or short.
        assert_eq!(
            p(&format!(" a=1 a={v23} b=&lt;{v23} b=2 c={v23} c")),
            vec![s("a", &v23), s("b", "2"), ("c".into(), None)]
        );
    }

    #[test]
    fn whitespace_is_unicode_white_space() {
        // Vertical tab and form feed are whitespace; U+001F (a separator in some libraries)
        // is not, so it is skipped as a character between attributes.
        assert_eq!(
            p("\u{b}a=1\u{c}b\u{1f}c=2\u{1f}"),
            vec![s("a", "1"), ("b".into(), None), s("c", "2\u{1f}")]
        );
        // A non-ASCII space ends an unquoted value; other non-ASCII letters are part of it.
        assert_eq!(
            p(" a=\u{e9}t\u{e9}\u{2009}b=\u{201c}x"),
            vec![s("a", "\u{e9}t\u{e9}"), s("b", "\u{201c}x")]
        );
        // Non-ASCII characters between attributes are skipped whole.
        assert_eq!(
            p("\u{e9}a\u{1f600}b"),
            vec![("a".into(), None), ("b".into(), None)]
        );
        // An unclosed quote runs to the end; `=` with nothing after it is a bare attribute.
        assert_eq!(p(" a='x y "), vec![s("a", "x y ")]);
        assert_eq!(p(" a =\u{3000}"), vec![("a".into(), None)]);
    }

    /// `parse_some` (decision 78) against the parser it replaced, on seeded random lists
    /// built from every kind of piece the rules tell apart: name chars, ASCII and Unicode
    /// whitespace, `=`, both quotes, references, other ASCII and non-ASCII chars between
    /// attributes, names repeated (duplicates) and many attributes (past the hash index's
    /// threshold); under each duplicate policy, decoding references or not. The kept
    /// pairs must be the same, in the same order.
    #[test]
    fn parse_some_matches_the_parser_it_replaced() {
        use DuplicateAttrs::{All, First, Last};
        let pieces: Vec<&str> = "a|id|src|x-1|_:.|Z9| |  |\t|\n|\r|\u{b}|\u{3000}|\u{a0}|\u{2009}|=|=|\"|'|&amp;|&|&#65;|,|@|/|>|\u{e9}|\u{1f600}|\u{1f}|v"
            .split('|')
            .collect();
        let pairs = |a: &Attrs| -> Vec<(String, Option<String>)> {
            a.iter()
                .map(|(n, v)| (n.to_string(), v.as_str().map(str::to_string)))
                .collect()
        };
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut text = String::new();
        for round in 0..30_000 {
            text.clear();
            let count = if round % 100 == 0 { 120 } else { 1 + next(16) };
            for _ in 0..count {
                text.push_str(pieces[next(pieces.len())]);
            }
            for dups in [First, Last, All] {
                for decode in [true, false] {
                    assert_eq!(
                        pairs(&parse_some(&text, decode, dups)),
                        pairs(&parse_some_reference(&text, decode, dups)),
                        "{text:?} {dups:?} decode {decode}"
                    );
                }
            }
        }
    }

    #[test]
    fn duplicates() {
        let first = parse_attrs(" id=1 x id=2", false, DuplicateAttrs::First);
        assert_eq!(first.get("id").and_then(AttrValue::as_str), Some("1"));
        let last = parse_attrs(" id=1 x id=2", false, DuplicateAttrs::Last);
        assert_eq!(last.get("id").and_then(AttrValue::as_str), Some("2"));
        assert_eq!(last.iter().next().map(|(n, _)| n), Some("id"));
        let all = parse_attrs(" id=1 x id=2", false, DuplicateAttrs::All);
        let ids: Vec<_> = all.get_all("id").filter_map(AttrValue::as_str).collect();
        assert_eq!(ids, ["1", "2"]);
    }
}

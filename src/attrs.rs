//! Attribute parsing (SPEC §2), run once on the text of a complete tag.
//!
//! The tokenizer has already found where the tag ends (its lexer tracks the same quote rule),
//! so this works on a finished `&str`: the text between the name and `>`, with trailing
//! whitespace and a self-closing `/` already removed.

use crate::config::{is_name_char, DuplicateAttrs};
use crate::entity;
use crate::output::{AttrStr, AttrValue, Attrs};
use crate::text::decode_at;

/// Parses `text` into attributes.
// Bounds: every index is < b.len() (checked by the loop guards), and slices start and end at ASCII
// bytes found by the scans or at b.len(), so they are char boundaries.
#[allow(clippy::indexing_slicing, clippy::string_slice)]
pub(crate) fn parse_attrs(text: &str, decode_entities: bool, dups: DuplicateAttrs) -> Attrs {
    let mut attrs = Attrs::new();
    // Names seen so far (duplicate lookup); on the stack for the usual handful.
    let mut names: smallvec::SmallVec<[&str; INDEX_AFTER]> = smallvec::SmallVec::new();
    let mut index: Option<std::collections::HashMap<&str, usize>> = None;
    let b = text.as_bytes();
    let mut i = 0;
    let skip_ws = |mut i: usize| -> usize {
        while i < b.len() {
            if b[i] < 0x80 {
                if !(b[i] as char).is_whitespace() {
                    break;
                }
                i += 1;
            } else {
                let c = decode_at(text, i);
                if !c.is_whitespace() {
                    break;
                }
                i += c.len_utf8();
            }
        }
        i
    };
    loop {
        i = skip_ws(i);
        if i >= b.len() {
            break;
        }
        if !is_name_char(b[i]) {
            // Any other character between attributes is skipped (D6).
            i += if b[i] < 0x80 {
                1
            } else {
                decode_at(text, i).len_utf8()
            };
            continue;
        }
        let name_start = i;
        while i < b.len() && is_name_char(b[i]) {
            i += 1;
        }
        let name = &text[name_start..i];
        let after_name = skip_ws(i);
        let value = if after_name < b.len() && b[after_name] == b'=' {
            let v = skip_ws(after_name + 1);
            if v >= b.len() {
                i = v;
                AttrValue::True
            } else if b[v] == b'"' || b[v] == b'\'' {
                let q = b[v];
                let body = v + 1;
                match memchr::memchr(q, &b[body..]) {
                    Some(k) => {
                        i = body + k + 1;
                        AttrValue::Str(value_text(&text[body..body + k], decode_entities))
                    }
                    None => {
                        i = b.len();
                        AttrValue::Str(value_text(&text[body..], decode_entities))
                    }
                }
            } else {
                let mut e = v;
                while e < b.len() {
                    if b[e] < 0x80 {
                        if (b[e] as char).is_whitespace() {
                            break;
                        }
                        e += 1;
                    } else {
                        let c = decode_at(text, e);
                        if c.is_whitespace() {
                            break;
                        }
                        e += c.len_utf8();
                    }
                }
                i = e;
                AttrValue::Str(value_text(&text[v..e], decode_entities))
            }
        } else {
            i = after_name;
            AttrValue::True
        };
        if dups == DuplicateAttrs::All {
            attrs.push(name, value);
            continue;
        }
        // Duplicate lookup: a scan for the usual handful, an index past that (a tag may hold
        // 10^5 attributes when max_tag_bytes allows it). Names are slices of `text`.
        let found = match &index {
            Some(ix) => ix.get(name).copied(),
            None => names.iter().position(|n| *n == name),
        };
        match found {
            None => {
                if let Some(ix) = &mut index {
                    ix.insert(name, names.len());
                }
                names.push(name);
                attrs.push(name, value);
                if index.is_none() && names.len() > INDEX_AFTER {
                    index = Some(names.iter().enumerate().map(|(i, n)| (*n, i)).collect());
                }
            }
            Some(k) if dups == DuplicateAttrs::Last => attrs.set_value_at(k, value),
            Some(_) => {}
        }
    }
    attrs
}

/// Attribute count past which duplicates are found through a hash index.
const INDEX_AFTER: usize = 16;

fn value_text(s: &str, decode_entities: bool) -> AttrStr {
    if decode_entities {
        AttrStr::from(entity::decode(s))
    } else {
        AttrStr::from(s)
    }
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

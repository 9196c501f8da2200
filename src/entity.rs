//! E1: character references. `&lt; &gt; &amp; &quot; &apos;` and `&#N;` / `&#xH;` (a Unicode
//! scalar value other than 0), at most 32 bytes from `&` to `;`. Anything else stays literal.
//!
//! [`EntityLexer`] is fed one byte at a time, so a reference cut by a chunk boundary resumes
//! where it stopped; [`decode`] runs the same lexer over a whole string (attribute values).

use crate::text::find1;
use std::borrow::Cow;

/// Longest reference, `&` to `;` inclusive.
pub(crate) const MAX_ENTITY_BYTES: usize = 32;

const NAMES: [(&[u8], char); 5] = [
    (b"lt", '<'),
    (b"gt", '>'),
    (b"amp", '&'),
    (b"quot", '"'),
    (b"apos", '\''),
];

/// Result of feeding one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The byte was taken; the reference is still unfinished.
    More,
    /// The byte (`;`) was taken and completed this character.
    Done(char),
    /// The byte was not taken: what was taken so far is literal text, and the byte must be
    /// processed again as ordinary input.
    Fail,
}

/// What has been seen of a reference so far (always starting with `&`).
#[derive(Debug, Clone)]
pub(crate) struct EntityLexer {
    buf: [u8; MAX_ENTITY_BYTES],
    len: usize,
    /// Numeric value so far (for `&#`).
    value: u32,
}

impl EntityLexer {
    /// A lexer that has just seen `&`.
    pub(crate) fn new() -> Self {
        let mut buf = [0; MAX_ENTITY_BYTES];
        buf[0] = b'&';
        EntityLexer {
            buf,
            len: 1,
            value: 0,
        }
    }

    /// The bytes taken so far (ASCII), to emit as literal text after a failure.
    // Bounds: `len <= MAX_ENTITY_BYTES == buf.len()`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn taken(&self) -> &str {
        // Only ASCII bytes are ever taken.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("&")
    }

    // Bounds: `push` checks `len < MAX_ENTITY_BYTES` before calling it.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    fn take(&mut self, b: u8) -> Step {
        self.buf[self.len] = b;
        self.len += 1;
        Step::More
    }

    /// Feeds one byte.
    // Bounds: `len < MAX_ENTITY_BYTES` is checked first, so `buf[len]` and `buf[1..len]` are in
    // bounds; name prefixes are compared after length checks.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn push(&mut self, b: u8) -> Step {
        if self.len >= MAX_ENTITY_BYTES {
            return Step::Fail;
        }
        let seen = &self.buf[1..self.len];
        match seen.first() {
            None => {
                if b == b'#' || (b.is_ascii_alphabetic() && NAMES.iter().any(|(n, _)| n[0] == b)) {
                    self.take(b)
                } else {
                    Step::Fail
                }
            }
            Some(b'#') => {
                let hex = seen.get(1) == Some(&b'x');
                let digits = if hex { seen.len() - 2 } else { seen.len() - 1 };
                if b == b';' {
                    if digits == 0 {
                        return Step::Fail;
                    }
                    return match char::from_u32(self.value) {
                        Some(c) if self.value != 0 => {
                            self.take(b);
                            Step::Done(c)
                        }
                        _ => Step::Fail,
                    };
                }
                if seen.len() == 1 && b == b'x' {
                    return self.take(b);
                }
                let d = if hex {
                    (b as char).to_digit(16)
                } else {
                    (b as char).to_digit(10)
                };
                match d {
                    Some(d) => {
                        let radix = if hex { 16 } else { 10 };
                        match self.value.checked_mul(radix).and_then(|v| v.checked_add(d)) {
                            Some(v) if v <= 0x10FFFF => {
                                self.value = v;
                                self.take(b)
                            }
                            // Can never become a scalar value: literal from here.
                            _ => Step::Fail,
                        }
                    }
                    None => Step::Fail,
                }
            }
            Some(_) => {
                if b == b';' {
                    return match NAMES.iter().find(|(n, _)| *n == seen) {
                        Some((_, c)) => {
                            self.take(b);
                            Step::Done(*c)
                        }
                        None => Step::Fail,
                    };
                }
                let n = seen.len();
                if b.is_ascii_alphabetic()
                    && NAMES
                        .iter()
                        .any(|(name, _)| name.len() > n && name[..n] == *seen && name[n] == b)
                {
                    self.take(b)
                } else {
                    Step::Fail
                }
            }
        }
    }
}

/// Decodes every reference in `s` (used for attribute values).
// Bounds: indices are < bytes.len() (loop guards) and slices end at `&` (ASCII), at the lexer's
// stop (ASCII) or at the end.
#[allow(clippy::indexing_slicing, clippy::string_slice)]
pub(crate) fn decode(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let Some(first) = find1(b'&', bytes) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while i < bytes.len() {
        if bytes[i] != b'&' {
            let next = find1(b'&', &bytes[i..]).map_or(bytes.len(), |k| i + k);
            out.push_str(&s[i..next]);
            i = next;
            continue;
        }
        let mut lx = EntityLexer::new();
        let mut j = i + 1;
        let mut done = None;
        while j < bytes.len() {
            match lx.push(bytes[j]) {
                Step::More => j += 1,
                Step::Done(c) => {
                    done = Some(c);
                    j += 1;
                    break;
                }
                Step::Fail => break,
            }
        }
        match done {
            Some(c) => out.push(c),
            None => out.push_str(lx.taken()),
        }
        i = j;
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_the_five_and_numbers() {
        assert_eq!(decode("AT&amp;T &lt;3 &gt; &quot;&apos;"), "AT&T <3 > \"'");
        assert_eq!(decode("&#65;&#x42;&#x6a;&#0067;"), "ABjC");
    }

    #[test]
    fn leaves_the_rest_literal() {
        for s in [
            "&",
            "& more",
            "&nbsp;",
            "&amp",
            "&LT;",
            "&#X41;",
            "&#0;",
            "&#xD800;",
            "&#x110000;",
            "&#;",
            "&#x;",
            "&am&",
            "a&&b",
            "&#99999999999;",
        ] {
            assert_eq!(decode(s), s, "{s}");
        }
        assert_eq!(decode("&am&amp;"), "&am&");
        assert_eq!(decode("&&lt;"), "&<");
    }

    #[test]
    fn length_limit() {
        let ok = format!("&#{}65;", "0".repeat(27)); // 32 bytes
        assert_eq!(ok.len(), 32);
        assert_eq!(decode(&ok), "A");
        let long = format!("&#{}65;", "0".repeat(28)); // 33 bytes
        assert_eq!(decode(&long), long);
    }
}

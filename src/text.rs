//! Character classes and small text helpers shared by the tokenizer and the span builder.

/// Whether `c` is removed by trimming (SPEC §4): Unicode whitespace and `, . ; : ! ? ( )`.
#[inline]
pub(crate) fn is_trim_char(c: char) -> bool {
    if c.is_ascii() {
        is_trim_ascii(c as u8)
    } else {
        c.is_whitespace()
    }
}

/// Whether the ASCII byte `c` is whitespace as `char::is_whitespace` sees it (tab, line
/// feed, vertical tab, form feed, carriage return, space).
#[inline(always)]
pub(crate) const fn is_ws_byte(c: u8) -> bool {
    matches!(c, b' ' | b'\t'..=b'\r')
}

/// Whether a non-ASCII char whose UTF-8 starts with `lead` may be whitespace: every
/// non-ASCII `White_Space` char (U+0085, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
/// U+202F, U+205F, U+3000) starts with one of these bytes, so any other lead byte is a char
/// that trimming keeps, known without decoding it (CJK, Cyrillic, accented Latin, …).
#[inline(always)]
const fn may_start_ws(lead: u8) -> bool {
    matches!(lead, 0xC2 | 0xE1 | 0xE2 | 0xE3)
}

/// The same for the last byte of a non-ASCII char (a continuation byte).
#[inline(always)]
const fn may_end_ws(last: u8) -> bool {
    matches!(last, 0x80..=0x8A | 0x9F | 0xA0 | 0xA8 | 0xA9 | 0xAF)
}

/// Byte offset of the first char of `s` that trimming keeps, if any.
// Bounds: `i < b.len()` is the loop condition.
#[allow(clippy::indexing_slicing, clippy::string_slice)]
pub(crate) fn first_kept(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if !is_trim_ascii(c) {
                return Some(i);
            }
            i += 1;
        } else if !may_start_ws(c) {
            // The only non-ASCII chars trimming removes are whitespace.
            return Some(i);
        } else {
            let ch = decode_at(s, i);
            if !is_trim_char(ch) {
                return Some(i);
            }
            i += ch.len_utf8();
        }
    }
    None
}

/// Byte offset just past the last char of `s` that trimming keeps, if any.
// Bounds: `end > 0` is the loop condition, and `end` only moves by whole chars.
#[allow(clippy::indexing_slicing, clippy::string_slice)]
pub(crate) fn last_kept_end(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut end = b.len();
    while end > 0 {
        let c = b[end - 1];
        if c < 0x80 {
            if !is_trim_ascii(c) {
                return Some(end);
            }
            end -= 1;
        } else if !may_end_ws(c) {
            return Some(end);
        } else {
            let ch = s[..end].chars().next_back().unwrap_or(' ');
            if !is_trim_char(ch) {
                return Some(end);
            }
            end -= ch.len_utf8();
        }
    }
    None
}

/// [`is_trim_char`] for an ASCII byte: the one place the punctuation is written.
#[inline]
const fn is_trim_ascii(c: u8) -> bool {
    is_ws_byte(c) || matches!(c, b',' | b'.' | b';' | b':' | b'!' | b'?' | b'(' | b')')
}

/// Plain text byte classes: 0 = not plain, 1 = kept by trimming, 2 = trimmable, 3 = a byte
/// of a non-ASCII character (plain for [`plain_str`], not for [`plain_ascii_prefix`]).
// Bounds: the loop runs `c` over 0..256, the table's length (evaluated at compile time).
#[allow(clippy::indexing_slicing)]
static PLAIN_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0usize;
    while c < 256 {
        let b = c as u8;
        // Printable ASCII and tab, except the bytes the text state acts on (`<`, `&`, and `` ` ``
        // for code spans); no newline (line starts, fences, retro lines) and no other control.
        if (b == b'\t' || (b >= 0x20 && b < 0x7f)) && !matches!(b, b'<' | b'&' | b'`') {
            t[c] = if is_trim_ascii(b) { 2 } else { 1 };
        } else if b >= 0x80 {
            t[c] = 3;
        }
        c += 1;
    }
    t
};

/// Whether `b` is plain text that may have non-ASCII characters: every ASCII byte is
/// plain (see `PLAIN_CLASS`). Says nothing about UTF-8 validity.
#[inline]
pub(crate) fn plain_str(b: &[u8]) -> bool {
    b.iter().all(|&c| plain_class(c) != 0)
}

/// The class of `c` in `PLAIN_CLASS`.
// Bounds: `PLAIN_CLASS` has 256 entries, indexed by a byte.
#[allow(clippy::indexing_slicing)]
#[inline]
pub(crate) fn plain_class(c: u8) -> u8 {
    PLAIN_CLASS[usize::from(c)]
}

/// The longest prefix of `b` that is plain ASCII (see `PLAIN_CLASS`): its length, and the
/// end of the last byte in it that trimming keeps (0 if none).
#[inline]
pub(crate) fn plain_ascii_prefix(b: &[u8]) -> (usize, usize) {
    let mut kept = 0;
    for (i, &c) in b.iter().enumerate() {
        match plain_class(c) {
            1 => kept = i + 1,
            2 => {}
            _ => return (i, kept),
        }
    }
    (b.len(), kept)
}

/// `STOP_CLASS` bit of a newline, which ends a queue (`StreamParser::take_queued`): a new
/// line may make the last one final, and it starts fences.
pub(crate) const STOP_NL: u8 = 1;
/// `STOP_CLASS` bit of `>`, which ends a tag, CDATA or a declaration: it ends a queue unless
/// the current line is held whole (`Builder::line_pin_room`).
pub(crate) const STOP_GT: u8 = 2;
/// `STOP_CLASS` bit of `&`: it ends a queue when references are decoded (one may decode to
/// a newline).
pub(crate) const STOP_AMP: u8 = 4;

/// Which `STOP_*` bit a byte has. (A table, not a bit set of the bytes below 64: the test
/// of `c < 64` that a set needs is a branch, which mispredicts in prose: a fifth of the
/// loop's samples fell after it, decision 83.)
// Bounds: the loop runs `c` over 0..256, the table's length (evaluated at compile time).
#[allow(clippy::indexing_slicing)]
static STOP_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0usize;
    while c < 256 {
        t[c] = match c as u8 {
            b'\n' => STOP_NL,
            b'>' => STOP_GT,
            b'&' => STOP_AMP,
            _ => 0,
        };
        c += 1;
    }
    t
};

/// Whether `b` holds a byte with one of the `STOP_*` bits in `mask` (as
/// [`word_has_stop`] takes it).
#[inline(always)]
pub(crate) fn has_stop(b: &[u8], mask: u8) -> bool {
    if b.len() < SHORT {
        if b.len() < 8 {
            return b.iter().any(|&c| byte_stops(c, mask));
        }
        // 8 bytes at a time: at 0, 8, 16 while more than 8 are left, then the last 8
        // (which may overlap the ones before).
        let stops = |s: Option<&[u8]>| s.and_then(word_of).is_some_and(|w| word_has_stop(w, mask));
        let mut rest = b;
        while rest.len() > 8 {
            if stops(rest.get(..8)) {
                return true;
            }
            rest = rest.get(8..).unwrap_or_default();
        }
        return stops(b.get(b.len() - 8..));
    }
    let found = match (mask & STOP_GT != 0, mask & STOP_AMP != 0) {
        _ if mask == STOP_GT => memchr::memchr(b'>', b),
        (true, true) => memchr::memchr3(b'\n', b'>', b'&', b),
        (true, false) => memchr::memchr2(b'\n', b'>', b),
        (false, true) => memchr::memchr2(b'\n', b'&', b),
        (false, false) => memchr::memchr(b'\n', b),
    };
    found.is_some()
}

/// Whether byte `c` has one of the `STOP_*` bits in `mask`: one table load and one test,
/// no branch.
// Bounds: `STOP_CLASS` has 256 entries, indexed by a byte.
#[allow(clippy::indexing_slicing)]
#[inline(always)]
pub(crate) fn byte_stops(c: u8, mask: u8) -> bool {
    STOP_CLASS[usize::from(c)] & mask != 0
}

/// Copies `src`, at most 32 bytes, to the start of `dst`, as two fixed-size copies (16, 8
/// or 4 bytes each) that together cover it, overlapping when it is shorter than both, or
/// below 4 bytes byte by byte: no call to `memcpy`, whose set-up costs more than a copy
/// this short. Returns `false`, copying nothing, if `src` is longer than 32 bytes or than
/// `dst`.
#[inline(always)]
pub(crate) fn copy_short(dst: &mut [u8], src: &[u8]) -> bool {
    #[inline(always)]
    fn pair<const K: usize>(dst: &mut [u8], src: &[u8]) {
        if let (Some(d), Some(head), Some(tail)) = (
            dst.get_mut(..src.len()),
            src.first_chunk::<K>(),
            src.last_chunk::<K>(),
        ) {
            if let Some(r) = d.first_chunk_mut::<K>() {
                *r = *head;
            }
            if let Some(r) = d.last_chunk_mut::<K>() {
                *r = *tail;
            }
        }
    }
    let n = src.len();
    if n > 32 || dst.len() < n {
        return false;
    }
    match n {
        16.. => pair::<16>(dst, src),
        8.. => pair::<8>(dst, src),
        4.. => pair::<4>(dst, src),
        _ => dst.iter_mut().zip(src).for_each(|(d, s)| *d = *s),
    }
    true
}

/// A chunk of 4 to 8 bytes as one little-endian word, the bytes past it 0 (two overlapping
/// 4-byte loads: the bytes both hold are the same, so or-ing them is exact).
#[inline(always)]
pub(crate) fn word_of(b: &[u8]) -> Option<u64> {
    let n = b.len();
    if !(4..=8).contains(&n) {
        return None;
    }
    let (lo, hi) = (b.first_chunk::<4>()?, b.last_chunk::<4>()?);
    Some(u64::from(u32::from_le_bytes(*lo)) | u64::from(u32::from_le_bytes(*hi)) << ((n - 4) * 8))
}

/// The high bit of each byte of a word ([`word_of`]): set in the word if a byte is not ASCII.
pub(crate) const WORD_HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether the word `w` ([`word_of`]) holds a byte with one of the `STOP_*` bits in `mask`
/// (`STOP_NL` with others or not, or `STOP_GT` alone), [`has_stop`] without a loop. The
/// padding bytes are 0, which is no stop byte.
#[inline(always)]
pub(crate) fn word_has_stop(w: u64, mask: u8) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    // Whether `x` has a zero byte: exact for "any".
    let zero = |x: u64| x.wrapping_sub(LO) & !x & WORD_HIGH != 0;
    // A byte of `w` equal to `c` is a zero byte of `w ^ c…c`.
    let has = |c: u8| zero(w ^ (LO * u64::from(c)));
    // (One test of the mask for the usual newline-only stop.)
    if mask & (STOP_GT | STOP_AMP) == 0 {
        return has(b'\n');
    }
    // (A tag's end alone, while a `retro_*` tag pins the frontier: decision 95.)
    if mask == STOP_GT {
        return has(b'>');
    }
    // A stop byte xor-ed with `\n` has bits only where it differs from `\n` (`>`: 0x34,
    // `&`: 0x2C), so one zero test of `w ^ \n…\n` with every other bit cleared finds any of
    // them; it also finds a few other bytes (with `>`: `*`, `.`, `:`; with `&`: `*`, `.`,
    // `"`; with both, those and `2`, `6`; and control bytes), which the exact tests clear.
    let differ = if mask & STOP_AMP == 0 {
        b'\n' ^ b'>'
    } else if mask & STOP_GT == 0 {
        b'\n' ^ b'&'
    } else {
        (b'\n' ^ b'>') | (b'\n' ^ b'&')
    };
    zero((w ^ (LO * u64::from(b'\n'))) & !(LO * u64::from(differ)))
        && (has(b'\n') || (mask & STOP_GT != 0 && has(b'>')) || (mask & STOP_AMP != 0 && has(b'&')))
}

/// [`word_has_stop`]'s first test for `mask`, as two words set up once per flush: a word `w`
/// for which `zero((w ^ xor) & keep)` is false holds no stop byte ([`word_may_stop`]). Exact
/// for a mask of one byte (`keep` all ones); for more, the one zero test that also finds a
/// few bytes that do not stop, which `word_has_stop` then clears (decision 97).
pub(crate) fn word_stop_words(mask: u8) -> (u64, u64) {
    const LO: u64 = 0x0101_0101_0101_0101;
    let differ = |c: u8| !(LO * u64::from(b'\n' ^ c));
    // (`word_has_stop` takes the newline as a stop byte unless the mask is `>` alone.)
    match (mask == STOP_GT, mask & STOP_GT != 0, mask & STOP_AMP != 0) {
        (true, _, _) => (LO * u64::from(b'>'), !0),
        (false, false, false) => (LO * u64::from(b'\n'), !0),
        (false, true, false) => (LO * u64::from(b'\n'), differ(b'>')),
        (false, false, true) => (LO * u64::from(b'\n'), differ(b'&')),
        (false, true, true) => (LO * u64::from(b'\n'), differ(b'>') & differ(b'&')),
    }
}

/// Whether the word `w` may hold a stop byte, by the words of [`word_stop_words`]: `false`
/// means it holds none.
#[inline(always)]
pub(crate) fn word_may_stop(w: u64, xor: u64, keep: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    let x = (w ^ xor) & keep;
    x.wrapping_sub(LO) & !x & WORD_HIGH != 0
}

/// Slices shorter than this are tested without a SIMD search: by [`has_stop`] a byte at a
/// time below 8 bytes and 8 at a time from 8 (decision 85), by the `find*` helpers a byte at
/// a time. SIMD search has a fixed setup cost that dominates on the 1–16 byte chunks of
/// token streams.
const SHORT: usize = 32;

/// The search of a text run for the next byte that may start a construct: `<`, and `&`
/// when references are decoded and a backtick when code spans are recognized (the bytes
/// depend only on the config). The SIMD searcher is set up once, with the config, instead
/// of by every call: `memchr3` spreads its bytes over vectors and goes through a function
/// pointer each time, about 30 of the 90 instructions a call takes on prose, whose runs
/// between such bytes average about 64 bytes (DESIGN.md, decision 76).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TextSearch {
    needles: Needles,
    /// The set-up searcher, where the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    simd: Option<Simd>,
}

#[derive(Clone, Copy, Debug)]
enum Needles {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
}

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
enum Simd {
    One(memchr::arch::x86_64::avx2::memchr::One),
    Two(memchr::arch::x86_64::avx2::memchr::Two),
    Three(memchr::arch::x86_64::avx2::memchr::Three),
}

impl TextSearch {
    pub(crate) fn new(decode_entities: bool, markdown_code: bool) -> TextSearch {
        let needles = match (decode_entities, markdown_code) {
            (true, true) => Needles::Three(b'<', b'&', b'`'),
            (true, false) => Needles::Two(b'<', b'&'),
            (false, true) => Needles::Two(b'<', b'`'),
            (false, false) => Needles::One(b'<'),
        };
        #[cfg(target_arch = "x86_64")]
        let simd = {
            use memchr::arch::x86_64::avx2::memchr as avx2;
            match needles {
                Needles::One(a) => avx2::One::new(a).map(Simd::One),
                Needles::Two(a, b) => avx2::Two::new(a, b).map(Simd::Two),
                Needles::Three(a, b, c) => avx2::Three::new(a, b, c).map(Simd::Three),
            }
        };
        TextSearch {
            needles,
            #[cfg(target_arch = "x86_64")]
            simd,
        }
    }

    /// The offset of the first of the bytes in `s`: the set-up searcher past the short
    /// slices, [`find1`] / [`find2`] / [`find3`] otherwise.
    #[inline]
    pub(crate) fn find(&self, s: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if s.len() >= SHORT {
            if let Some(simd) = &self.simd {
                return match simd {
                    Simd::One(f) => f.find(s),
                    Simd::Two(f) => f.find(s),
                    Simd::Three(f) => f.find(s),
                };
            }
        }
        match self.needles {
            Needles::One(a) => find1(a, s),
            Needles::Two(a, b) => find2(a, b, s),
            Needles::Three(a, b, c) => find3(a, b, c, s),
        }
    }
}

/// The search for newlines in a text run, both ways, with its SIMD searcher set up once
/// (per config, as [`TextSearch`]; decision 76): `memrchr` took about 73 instructions a
/// call on prose, where the builder looks for the last newline of every run it reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewlineSearch {
    #[cfg(target_arch = "x86_64")]
    simd: Option<memchr::arch::x86_64::avx2::memchr::One>,
}

impl NewlineSearch {
    pub(crate) fn new() -> NewlineSearch {
        NewlineSearch {
            #[cfg(target_arch = "x86_64")]
            simd: memchr::arch::x86_64::avx2::memchr::One::new(b'\n'),
        }
    }

    /// The offset of the first newline in `s`.
    #[inline]
    pub(crate) fn find(&self, s: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.simd.as_ref().filter(|_| s.len() >= SHORT) {
            return f.find(s);
        }
        find1(b'\n', s)
    }

    /// The offset of the last newline in `s`.
    #[inline]
    pub(crate) fn rfind(&self, s: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.simd.as_ref().filter(|_| s.len() >= SHORT) {
            return f.rfind(s);
        }
        rfind1(b'\n', s)
    }
}

/// `memchr` that is fast on tiny slices too.
#[inline]
pub(crate) fn find1(a: u8, s: &[u8]) -> Option<usize> {
    if s.len() < SHORT {
        s.iter().position(|&c| c == a)
    } else {
        memchr::memchr(a, s)
    }
}

/// `memrchr` that is fast on tiny slices too.
#[inline]
pub(crate) fn rfind1(a: u8, s: &[u8]) -> Option<usize> {
    if s.len() < SHORT {
        s.iter().rposition(|&c| c == a)
    } else {
        memchr::memrchr(a, s)
    }
}

/// `memchr2` that is fast on tiny slices too.
#[inline]
pub(crate) fn find2(a: u8, b: u8, s: &[u8]) -> Option<usize> {
    if s.len() < SHORT {
        s.iter().position(|&c| c == a || c == b)
    } else {
        memchr::memchr2(a, b, s)
    }
}

/// `memchr3` that is fast on tiny slices too.
#[inline]
pub(crate) fn find3(a: u8, b: u8, c3: u8, s: &[u8]) -> Option<usize> {
    if s.len() < SHORT {
        s.iter().position(|&c| c == a || c == b || c == c3)
    } else {
        memchr::memchr3(a, b, c3, s)
    }
}

/// The bytes 0 to 127.
// Bounds: `i < 128` is the loop condition.
#[allow(clippy::indexing_slicing)]
static ASCII_BYTES: [u8; 128] = {
    let mut b = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        b[i] = i as u8;
        i += 1;
    }
    b
};

/// The 128 ASCII chars, in order: one of them is a `&str` by slicing, with no validation.
static ASCII: &str = match std::str::from_utf8(&ASCII_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("ASCII is UTF-8"),
};

/// `chunk` as text, if it is valid UTF-8: `str::from_utf8`, except that one ASCII byte (a
/// chunk of a stream fed a byte at a time) is sliced out of `ASCII`, a few instructions
/// instead of the validator's set-up (about 40 for one byte).
#[inline(always)]
pub(crate) fn as_text(chunk: &[u8]) -> Option<&str> {
    match *chunk {
        [c] if c < 0x80 => ASCII.get(usize::from(c)..=usize::from(c)),
        _ => crate::utf8::to_str(chunk),
    }
}

/// The char starting at byte `i` of `s` (`i` must be a char boundary).
#[inline]
pub(crate) fn decode_at(s: &str, i: usize) -> char {
    s.get(i..)
        .and_then(|t| t.chars().next())
        .unwrap_or('\u{FFFD}')
}

/// The largest char boundary of `s` that is `<= i`.
pub(crate) fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` that is `>= i`.
pub(crate) fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `copy_short` copies exactly the bytes of every source of 0–32 bytes, into
    /// destinations of every length from the source's to 40, and leaves the rest of the
    /// destination as it was; longer sources and shorter destinations copy nothing.
    #[test]
    fn copy_short_copies_exactly_the_source() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40usize {
            for room in 0..=40usize {
                let mut dst = [0xEEu8; 40];
                let copied = copy_short(&mut dst[..room], &src[..n]);
                assert_eq!(copied, n <= 32 && room >= n, "{n} into {room}");
                let want = if copied { &src[..n] } else { &[][..] };
                assert_eq!(&dst[..want.len()], want, "{n} into {room}");
                assert!(
                    dst[want.len()..].iter().all(|&b| b == 0xEE),
                    "{n} into {room}"
                );
            }
        }
    }

    /// The set-up newline search (decision 76) finds the first and last newline as a
    /// byte-by-byte search does: slices of every length up to 200, with none, or one or two
    /// newlines at places on both sides of the short-slice loop and the vector sizes.
    #[test]
    fn newline_search_finds_the_first_and_last_newline() {
        let search = NewlineSearch::new();
        let mut checked = 0;
        for len in 0..200usize {
            const EDGES: [usize; 10] = [0, 1, 15, 16, 31, 32, 33, 63, 64, 65];
            let places: Vec<usize> = EDGES
                .into_iter()
                .chain([len / 2, len.saturating_sub(1)])
                .filter(|&p| p < len)
                .collect();
            for &a in &places {
                for &b in &places {
                    let mut s = vec![b'x'; len];
                    s[a] = b'\n';
                    s[b] = b'\n';
                    assert_eq!(search.find(&s), s.iter().position(|&c| c == b'\n'));
                    assert_eq!(search.rfind(&s), s.iter().rposition(|&c| c == b'\n'));
                    checked += 1;
                }
            }
            let none = vec![b'x'; len];
            assert_eq!((search.find(&none), search.rfind(&none)), (None, None));
        }
        assert!(checked > 15_000, "{checked}");
    }

    /// The set-up text search (decision 76) finds what a byte-by-byte search for its bytes
    /// finds, under every combination of the two settings that choose them: in slices of
    /// every length up to 200 (both sides of the short-slice loop and of the SIMD vector
    /// sizes), with one of every byte value at every position in a run of filler, and with
    /// none.
    #[test]
    fn text_search_finds_the_first_of_its_bytes() {
        for (entities, code) in [(true, true), (true, false), (false, true), (false, false)] {
            let search = TextSearch::new(entities, code);
            let wanted = |c: u8| c == b'<' || (entities && c == b'&') || (code && c == b'`');
            let mut checked = 0;
            for len in 0..200usize {
                let mut s = vec![b'a'; len];
                assert_eq!(search.find(&s), None);
                for at in [0, 1, len / 2, len.saturating_sub(33), len.saturating_sub(1)] {
                    if at >= len {
                        continue;
                    }
                    for c in 0..=255u8 {
                        s[at] = c;
                        let want = s.iter().position(|&x| wanted(x));
                        assert_eq!(search.find(&s), want, "{entities} {code} {len} {at} {c}");
                        // A second one later changes nothing.
                        if let Some(last) = s.last_mut().filter(|_| at + 1 < len) {
                            *last = b'<';
                            let want = s.iter().position(|&x| wanted(x));
                            assert_eq!(search.find(&s), want);
                            s[len - 1] = b'a';
                        }
                        checked += 1;
                    }
                    s[at] = b'a';
                }
            }
            assert!(checked > 200_000, "{checked}");
        }
    }

    /// A byte stops a queue under a mask exactly when it is a newline, or `>` with
    /// `STOP_GT`, or `&` with `STOP_AMP`: every byte, every mask, alone and in both lengths
    /// of `has_stop`.
    #[test]
    fn the_stop_table_holds_exactly_the_stop_bytes() {
        for mask in (0..4u8).map(|m| STOP_NL | m << 1) {
            for c in 0..=255u8 {
                let want = c == b'\n'
                    || (c == b'>' && mask & STOP_GT != 0)
                    || (c == b'&' && mask & STOP_AMP != 0);
                assert_eq!(byte_stops(c, mask), want, "byte {c:#x}, mask {mask}");
                assert_eq!(has_stop(&[b'a', c], mask), want);
                // (Short slices test byte by byte, long ones search.)
                let mut long = [b'a'; 40];
                long[37] = c;
                assert_eq!(has_stop(&long, mask), want);
            }
        }
    }

    /// `has_stop` agrees with the stop table for every byte at every position of slices of
    /// 1 to 40 bytes (a byte at a time below 8, 8 at a time below 32, searched from 32),
    /// under every mask, among fillers that are no stop (`.` passes the word's first test).
    #[test]
    fn the_stop_search_finds_every_stop_byte_at_every_position() {
        for mask in (0..4u8).map(|m| STOP_NL | m << 1) {
            for n in 1..=40 {
                for fill in [b'a', b'.'] {
                    assert!(!has_stop(&vec![fill; n], mask), "{n} {fill}");
                    for at in 0..n {
                        for c in 0..=255u8 {
                            let mut b = vec![fill; n];
                            b[at] = c;
                            assert_eq!(
                                has_stop(&b, mask),
                                byte_stops(c, mask),
                                "{n} {at} {c:#x} {mask}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The one-word stop test agrees with the per-byte test for every chunk of 4 to 8
    /// bytes that differs from a run of filler in one byte (every value, every position),
    /// and in two, under every mask; and the word holds the chunk, zero-padded. (Fillers
    /// `.` and `*` pass the first test of `\n` and `>` together, which the exact ones then
    /// clear.) The queue's form of it (`word_may_stop` then `word_has_stop`) agrees too.
    #[test]
    fn word_stop_test_is_the_byte_test() {
        // Every mask a flush sets: the newline with `>` and `&` or not, and `>` alone.
        let masks: Vec<u8> = (0..4u8)
            .map(|m| STOP_NL | m << 1)
            .chain([STOP_GT])
            .collect();
        for n in 4..=8 {
            for fill in [b'a', b' ', b'<', 0x7f, b'.', b'*'] {
                for i in 0..n {
                    for b in 0..=255u8 {
                        let mut chunk = vec![fill; n];
                        chunk[i] = b;
                        chunk[(i + 1) % n] = b.wrapping_add(1);
                        let w = word_of(&chunk).unwrap();
                        let bytes = w.to_le_bytes();
                        assert_eq!(&bytes[..n], &chunk[..]);
                        assert!(bytes[n..].iter().all(|&z| z == 0));
                        for &m in &masks {
                            let want = has_stop(&chunk, m);
                            assert_eq!(word_has_stop(w, m), want, "{chunk:?} {m}");
                            // The queue's two steps (decision 97); the first alone is
                            // exact for one stop byte.
                            let (x, k) = word_stop_words(m);
                            let may = word_may_stop(w, x, k);
                            assert_eq!(may && word_has_stop(w, m), want, "{chunk:?} {m}");
                            if m == STOP_NL || m == STOP_GT {
                                assert_eq!(may, want, "{chunk:?} {m}");
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(word_of(b"abc"), None);
        assert_eq!(word_of(b"abcdefghi"), None);
    }

    #[test]
    fn as_text_is_from_utf8() {
        for c in 0..=255u8 {
            assert_eq!(as_text(&[c]), std::str::from_utf8(&[c]).ok(), "{c}");
        }
        for chunk in [
            &b""[..],
            b"ab",
            b"\xc3\xa9",
            b"\xc3",
            b"a\xff",
            b"<cite id=1>",
        ] {
            assert_eq!(as_text(chunk), std::str::from_utf8(chunk).ok(), "{chunk:?}");
        }
    }

    #[test]
    fn kept_bounds() {
        assert_eq!(first_kept("  ,.x y. "), Some(4));
        assert_eq!(last_kept_end("  ,.x y. "), Some(7));
        assert_eq!(first_kept(" \u{3000}日本 "), Some(4));
        assert_eq!(last_kept_end(" 日本\u{a0}"), Some(7));
        assert_eq!(first_kept(" ,;:!?() \n"), None);
        assert_eq!(last_kept_end(""), None);
    }

    /// The byte filters cover every non-ASCII whitespace char, and trimming agrees with
    /// `is_trim_char` on every char, alone and between kept and trimmed neighbours.
    #[test]
    fn non_ascii_byte_filters_are_exhaustive() {
        let mut buf = [0u8; 4];
        for c in ('\u{80}'..=char::MAX).filter(|c| c.is_whitespace()) {
            let b = c.encode_utf8(&mut buf).as_bytes();
            assert!(may_start_ws(b[0]), "{c:?}");
            assert!(may_end_ws(b[b.len() - 1]), "{c:?}");
        }
        for c in '\0'..=char::MAX {
            let one = c.to_string();
            let kept = !is_trim_char(c);
            assert_eq!(first_kept(&one), kept.then_some(0), "{c:?}");
            assert_eq!(last_kept_end(&one), kept.then_some(one.len()), "{c:?}");
            let mixed = format!(" x{c}\u{3000}");
            let last = if kept { 2 + c.len_utf8() } else { 2 };
            assert_eq!(last_kept_end(&mixed), Some(last), "{c:?}");
            let mixed = format!("\u{a0}{c}x ");
            let first = if kept { 2 } else { 2 + c.len_utf8() };
            assert_eq!(first_kept(&mixed), Some(first), "{c:?}");
        }
    }

    #[test]
    fn boundaries() {
        let s = "a日b";
        assert_eq!(floor_boundary(s, 2), 1);
        assert_eq!(ceil_boundary(s, 2), 4);
        assert_eq!(floor_boundary(s, 9), 5);
    }
}

//! Byte chunks to `&str` pieces: a UTF-8 character split between chunks waits here (at most
//! 3 bytes) until the rest arrives. Invalid sequences are an error naming their offset, or
//! U+FFFD in lossy mode, replacing exactly what `String::from_utf8_lossy` replaces, however
//! the input is split.

use crate::error::Error;

#[derive(Debug, Default, Clone)]
pub(crate) struct Utf8Decoder {
    partial: [u8; 4],
    plen: usize,
    /// Input bytes consumed before the next one.
    pub(crate) consumed: u64,
    pub(crate) lossy: bool,
}

/// [`Utf8Decoder::split`]: a completed character, whole characters, and the start of an
/// incomplete one.
pub(crate) struct Split<'a> {
    pub(crate) head: Option<char>,
    pub(crate) body: &'a str,
    tail: [u8; 4],
    tail_len: usize,
}

impl Split<'_> {
    /// Whether a partial character waits after this split.
    pub(crate) fn has_tail(&self) -> bool {
        self.tail_len > 0
    }
}

/// The character that the whole sequence `seq` encodes, if it is valid.
fn decode_seq(seq: &[u8]) -> Option<char> {
    let (&last, prefix) = seq.split_last()?;
    if !valid_prefix(prefix) || !(0x80..=0xBF).contains(&last) {
        return None;
    }
    let (&lead, rest) = seq.split_first()?;
    let lead_bits = u32::from(lead) & (0x7F >> seq.len());
    let v = rest
        .iter()
        .fold(lead_bits, |v, &c| (v << 6) | (u32::from(c) & 0x3F));
    char::from_u32(v)
}

/// The length of the incomplete character that ends `b`, if its bytes so far are valid
/// (0 if `b` ends with a whole character or is empty); `None` if they cannot begin one.
/// Past the last lead byte, `from_utf8` of the rest judges the remaining bytes.
// Bounds: `k <= b.len()` and `k <= 3`.
#[allow(clippy::indexing_slicing)]
fn incomplete_tail(b: &[u8]) -> Option<usize> {
    for k in 1..=b.len().min(3) {
        let lead = b[b.len() - k];
        if lead < 0x80 {
            return Some(0);
        }
        if lead >= 0xC0 {
            let n = seq_len(lead);
            if n <= k {
                // A whole sequence (or an invalid lead): `from_utf8` judges it.
                return Some(0);
            }
            return valid_prefix(&b[b.len() - k..]).then_some(k);
        }
    }
    Some(0)
}

/// Whether `p`, shorter than the sequence its lead byte starts, can begin a valid
/// character (the second-byte ranges of Unicode's well-formed sequences, then
/// continuation bytes).
fn valid_prefix(p: &[u8]) -> bool {
    let Some((&lead, rest)) = p.split_first() else {
        return true;
    };
    if seq_len(lead) <= p.len() {
        return false;
    }
    rest.iter().enumerate().all(|(k, &c)| {
        let range = match (k, lead) {
            (0, 0xE0) => 0xA0..=0xBF,
            (0, 0xED) => 0x80..=0x9F,
            (0, 0xF0) => 0x90..=0xBF,
            (0, 0xF4) => 0x80..=0x8F,
            _ => 0x80..=0xBF,
        };
        range.contains(&c)
    })
}

/// Inputs this long are validated with SIMD (`simdutf8`); shorter ones with `str::from_utf8`,
/// which has no set-up to amortize (and which `simdutf8` itself falls back to below 64 bytes).
const SIMD_MIN: usize = 64;

/// `str::from_utf8(b).ok()`. Long inputs are validated 32 bytes at a time (AVX2, chosen at
/// run time; SSE 4.2 or the scalar validator where it is missing), which matters for
/// non-Latin text: `str::from_utf8` goes a byte at a time through anything that is not ASCII.
/// Callers that need where an input stops being UTF-8 ask `str::from_utf8` after a `None`.
#[inline]
pub(crate) fn to_str(b: &[u8]) -> Option<&str> {
    #[cfg(test)]
    VALIDATED.with(|v| v.set(v.get() + b.len()));
    if b.len() >= SIMD_MIN {
        simdutf8::basic::from_utf8(b).ok()
    } else {
        std::str::from_utf8(b).ok()
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes given to `to_str` on this thread (for a test that bounds them).
    static VALIDATED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Length of the sequence a lead byte starts (1 for invalid leads, which fail validation).
fn seq_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

impl Utf8Decoder {
    /// The start of a character that waits for the rest (empty if none does).
    pub(crate) fn partial(&self) -> &[u8] {
        self.partial.get(..self.plen).unwrap_or_default()
    }

    /// Whether part of a character is waiting.
    pub(crate) fn has_partial(&self) -> bool {
        self.plen > 0
    }

    /// Forgets the start of a character that waits ([`partial`](Utf8Decoder::partial)), as
    /// if its bytes had not come yet: the caller feeds them again, at the head of its next
    /// input. The decoder reads input the same however it is split, so nothing changes but
    /// the number of pieces it hands on (decision 96).
    pub(crate) fn unfeed_partial(&mut self) {
        self.consumed -= self.plen as u64;
        self.plen = 0;
    }

    /// For the short path of a byte chunk: the waiting partial character completed by the
    /// start of `chunk` (`None` if none waits), the whole characters after it, and the start
    /// of a character that `chunk` leaves incomplete (which then waits:
    /// [`keep`](Utf8Decoder::keep)). `None` if any of it is invalid or the chunk does not
    /// complete the waiting character: the full path ([`feed`](Utf8Decoder::feed)) takes those.
    pub(crate) fn split<'a>(&self, chunk: &'a [u8]) -> Option<Split<'a>> {
        let mut head = None;
        let mut rest = chunk;
        if self.plen > 0 {
            let need = seq_len(*self.partial.first()?);
            let (mut seq, mut len) = (self.partial, self.plen);
            while len < need {
                let Some((&c, after)) = rest.split_first() else {
                    // Still incomplete: all of it waits, if it can still become a char.
                    return valid_prefix(seq.get(..len)?).then_some(Split {
                        head: None,
                        body: "",
                        tail: seq,
                        tail_len: len,
                    });
                };
                *seq.get_mut(len)? = c;
                len += 1;
                rest = after;
            }
            head = Some(decode_seq(seq.get(..need)?)?);
        }
        let t = incomplete_tail(rest)?;
        let (body, end) = rest.split_at(rest.len() - t);
        let mut tail = [0; 4];
        for (d, &c) in tail.iter_mut().zip(end) {
            *d = c;
        }
        let body = if body.is_empty() { "" } else { to_str(body)? };
        Some(Split {
            head,
            body,
            tail,
            tail_len: t,
        })
    }

    /// Commits a [`split`](Utf8Decoder::split) of a chunk of `n` bytes: its incomplete
    /// end waits.
    pub(crate) fn keep(&mut self, split: &Split<'_>, n: usize) {
        self.partial = split.tail;
        self.plen = split.tail_len;
        self.consumed += n as u64;
    }

    /// Decodes `input`, calling `sink` with each valid piece. On an invalid sequence (strict
    /// mode) the valid text before it has been passed to `sink` and the error names its offset.
    // Bounds: `take <= need - plen <= 3` and `have <= 4`; `i + v` and `i + n` come from `from_utf8`
    // on `input[i..]`.
    #[allow(clippy::indexing_slicing, clippy::string_slice)]
    pub(crate) fn feed(&mut self, input: &[u8], sink: &mut dyn FnMut(&str)) -> Result<(), Error> {
        let mut i = 0;
        if self.plen > 0 {
            let need = seq_len(self.partial[0]);
            let take = (need - self.plen).min(input.len());
            let mut tmp = self.partial;
            tmp[self.plen..self.plen + take].copy_from_slice(&input[..take]);
            let have = self.plen + take;
            let start = self.consumed - self.plen as u64;
            match std::str::from_utf8(&tmp[..have]) {
                Ok(s) => {
                    sink(s);
                    i = take;
                    self.plen = 0;
                }
                Err(e) => match e.error_len() {
                    None => {
                        self.partial = tmp;
                        self.plen = have;
                        self.consumed += take as u64;
                        return Ok(());
                    }
                    Some(n) => {
                        if !self.lossy {
                            return Err(Error::InvalidUtf8 { offset: start });
                        }
                        sink("\u{FFFD}");
                        i = n.saturating_sub(self.plen);
                        self.plen = 0;
                    }
                },
            }
        }
        // The fast validator first: most input is valid, and a chunk of a byte stream often
        // ends inside a character, which then waits. `str::from_utf8` finds where invalid
        // input goes wrong, and after the first invalid sequence it alone goes on: it stops
        // at the next one, where the fast validator would read all the rest of the chunk
        // again for each (random bytes in lossy mode: 1 MB/s, quadratic in the chunk).
        let mut fast = true;
        loop {
            let rest = &input[i..];
            if let Some(t) = incomplete_tail(rest).filter(|_| fast) {
                let (body, tail) = rest.split_at(rest.len() - t);
                if let Some(s) = to_str(body) {
                    if !s.is_empty() {
                        sink(s);
                    }
                    self.partial[..t].copy_from_slice(tail);
                    self.plen = t;
                    break;
                }
            }
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    if !s.is_empty() {
                        sink(s);
                    }
                    break;
                }
                Err(e) => {
                    fast = false;
                    let v = e.valid_up_to();
                    if v > 0 {
                        // The prefix was just validated.
                        sink(to_str(&input[i..i + v]).unwrap_or_default());
                    }
                    i += v;
                    match e.error_len() {
                        None => {
                            let rest = &input[i..];
                            self.partial[..rest.len()].copy_from_slice(rest);
                            self.plen = rest.len();
                            break;
                        }
                        Some(n) => {
                            if !self.lossy {
                                self.consumed += i as u64;
                                return Err(Error::InvalidUtf8 {
                                    offset: self.consumed,
                                });
                            }
                            sink("\u{FFFD}");
                            i += n;
                        }
                    }
                }
            }
        }
        self.consumed += input.len() as u64;
        Ok(())
    }

    /// End of input: a waiting partial character is an error (or U+FFFD in lossy mode).
    pub(crate) fn finish(&mut self, sink: &mut dyn FnMut(&str)) -> Result<(), Error> {
        if self.plen == 0 {
            return Ok(());
        }
        let offset = self.consumed - self.plen as u64;
        self.plen = 0;
        if self.lossy {
            sink("\u{FFFD}");
            Ok(())
        } else {
            Err(Error::TruncatedUtf8 { offset })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lossy decoding of a chunk full of invalid sequences validates each byte a bounded
    /// number of times: the fast validator reads the rest of the chunk only before the
    /// first invalid sequence (it read all the rest again after each: 889 M bytes for
    /// these 64 KiB).
    #[test]
    fn lossy_garbage_is_validated_in_one_pass() {
        let mut seed: u64 = 7;
        let garbage: Vec<u8> = (0..64 << 10)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect();
        let mut d = Utf8Decoder {
            lossy: true,
            ..Utf8Decoder::default()
        };
        let mut out = String::new();
        VALIDATED.with(|v| v.set(0));
        d.feed(&garbage, &mut |s| out.push_str(s)).unwrap();
        let validated = VALIDATED.with(|v| v.get());
        assert!(
            validated <= 2 * garbage.len(),
            "{validated} bytes validated for {}",
            garbage.len()
        );
        assert_eq!(
            out,
            String::from_utf8_lossy(&garbage[..garbage.len() - d.plen])
        );
    }

    fn run(chunks: &[&[u8]], lossy: bool) -> Result<String, Error> {
        let mut d = Utf8Decoder {
            lossy,
            ..Default::default()
        };
        let mut out = String::new();
        for c in chunks {
            d.feed(c, &mut |s| out.push_str(s))?;
        }
        d.finish(&mut |s| out.push_str(s))?;
        Ok(out)
    }

    #[test]
    fn every_split_matches_from_utf8_lossy() {
        let samples: &[&[u8]] = &[
            "héllo 日本 🎉".as_bytes(),
            b"a\xffb",
            b"\xe6\x97",
            b"\xe6\x97a",
            b"\xf0\x9f\x8e",
            b"\xed\xa0\x80x",
            b"\xc0\xafz",
            b"\xf4\x90\x80\x80",
            b"ok\xe2\x82",
        ];
        for s in samples {
            let want = String::from_utf8_lossy(s).into_owned();
            for i in 0..=s.len() {
                for j in i..=s.len() {
                    let got = run(&[&s[..i], &s[i..j], &s[j..]], true).unwrap();
                    assert_eq!(got, want, "{s:?} split {i} {j}");
                }
            }
        }
    }

    /// `to_str` against `from_utf8` on inputs around and past the SIMD threshold: text of
    /// every width (ASCII, Latin, CJK, emoji), with each kind of bad sequence put at every
    /// position (inside a SIMD block, across two, in the scalar tail, cutting a character),
    /// and cut to every length. The decoder, which tries `to_str` first, still reports the
    /// first bad byte's offset and replaces what `from_utf8_lossy` replaces.
    #[test]
    fn to_str_matches_from_utf8() {
        let texts = [
            "plain ASCII words and a newline\n".repeat(5),
            "héllo wörld, ça va? ".repeat(8),
            "日本語のテキストと中文文本。".repeat(5),
            "emoji 🎉🚀 mixed with ascii ✓ ".repeat(5),
        ];
        let bad: [&[u8]; 6] = [
            b"\xff",
            b"\x80",
            b"\xe6\x97",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"\xf4\x90\x80\x80",
        ];
        for t in &texts {
            let t = t.as_bytes();
            for len in (0..=t.len()).filter(|&n| n < 8 || n % 7 == 0 || (56..=136).contains(&n)) {
                assert_eq!(
                    to_str(&t[..len]),
                    std::str::from_utf8(&t[..len]).ok(),
                    "{len}"
                );
            }
            // Valid text cut anywhere, inside characters too: the decoder gives it back.
            for cut in 0..=t.len() {
                let whole = std::str::from_utf8(t).ok().map(str::to_owned);
                assert_eq!(run(&[&t[..cut], &t[cut..]], false).ok(), whole, "cut {cut}");
            }
            for b in bad {
                for at in 0..=t.len() {
                    let mut input = t[..at].to_vec();
                    input.extend_from_slice(b);
                    input.extend_from_slice(&t[at..]);
                    let want = std::str::from_utf8(&input);
                    assert_eq!(to_str(&input), want.ok(), "{b:x?} at {at}");
                    let strict = run(&[&input], false);
                    match want {
                        Ok(s) => assert_eq!(strict.as_deref(), Ok(s)),
                        Err(e) => {
                            let offset = e.valid_up_to() as u64;
                            // (A character cut by the end is reported by `finish`.)
                            let err = match e.error_len() {
                                Some(_) => Error::InvalidUtf8 { offset },
                                None => Error::TruncatedUtf8 { offset },
                            };
                            assert_eq!(strict, Err(err), "{b:x?} at {at}");
                        }
                    }
                    let lossy = run(&[&input], true).unwrap();
                    assert_eq!(lossy, String::from_utf8_lossy(&input), "{b:x?} at {at}");
                    // Cut in two around the bad sequence and at the SIMD block's edge: the
                    // first piece may end inside a character (which then waits) or inside
                    // the bad sequence.
                    let cuts = [at.saturating_sub(1), at, at + 1, at + 2, 63, 64, 65];
                    for cut in cuts.into_iter().filter(|&c| c <= input.len()) {
                        let (x, y) = input.split_at(cut);
                        assert_eq!(run(&[x, y], false), strict, "{b:x?} at {at}, cut {cut}");
                        assert_eq!(
                            run(&[x, y], true).unwrap(),
                            lossy,
                            "{b:x?} at {at}, cut {cut}"
                        );
                    }
                }
            }
        }
    }

    /// `valid_prefix` against `from_utf8` on every sequence of up to three bytes that
    /// starts with a lead byte.
    #[test]
    fn valid_prefix_matches_from_utf8() {
        for lead in 0xC0..=0xFFu8 {
            let complete = |p: &[u8]| std::str::from_utf8(p).is_ok();
            let incomplete =
                |p: &[u8]| matches!(std::str::from_utf8(p), Err(e) if e.error_len().is_none());
            assert_eq!(valid_prefix(&[lead]), incomplete(&[lead]), "{lead:x}");
            for b in 0..=0xFFu8 {
                let p = [lead, b];
                assert_eq!(valid_prefix(&p), incomplete(&p), "{p:x?}");
                if !incomplete(&p) {
                    continue;
                }
                for c in 0..=0xFFu8 {
                    let p = [lead, b, c];
                    assert_eq!(valid_prefix(&p), incomplete(&p), "{p:x?}");
                    assert!(!(complete(&p) && valid_prefix(&p)));
                }
            }
        }
    }

    /// `decode_seq` against `from_utf8` on every sequence of two to four bytes that
    /// starts with a lead byte (four-byte ones: every valid three-byte prefix).
    #[test]
    fn decode_seq_matches_from_utf8() {
        let std = |p: &[u8]| std::str::from_utf8(p).ok().and_then(|s| s.chars().next());
        for lead in 0xC0..=0xFFu8 {
            for b in 0..=0xFFu8 {
                let p = [lead, b];
                if seq_len(lead) == 2 {
                    assert_eq!(decode_seq(&p), std(&p), "{p:x?}");
                }
                for c in 0..=0xFFu8 {
                    let p = [lead, b, c];
                    if seq_len(lead) == 3 {
                        assert_eq!(decode_seq(&p), std(&p), "{p:x?}");
                    } else if seq_len(lead) == 4 && valid_prefix(&p) {
                        for d in 0..=0xFFu8 {
                            let p = [lead, b, c, d];
                            assert_eq!(decode_seq(&p), std(&p), "{p:x?}");
                        }
                    }
                }
            }
        }
    }

    /// The short path's split of (waiting partial, chunk) agrees with `feed` wherever it
    /// answers: the same text, and the same bytes left waiting.
    #[test]
    fn split_agrees_with_feed() {
        let samples: &[&[u8]] = &[
            "héllo 日本 🎉 ü".as_bytes(),
            b"a\xffb",
            b"\xe6\x97\xa5\xe6",
            b"\xed\xa0\x80x",
            b"\xf4\x90\x80\x80",
            b"\xe0\x80\xaf",
            b"x\xf0\x9f\x8e",
            b"\xf0\x9f\x8e\x89\xc3",
        ];
        let mut answered = 0;
        for s in samples {
            for i in 0..=s.len() {
                for j in i..=s.len() {
                    let mut d = Utf8Decoder::default();
                    let mut out = String::new();
                    if d.feed(&s[..i], &mut |t| out.push_str(t)).is_err() {
                        continue;
                    }
                    let mut full = d.clone();
                    let mut want = String::new();
                    let fed = full.feed(&s[i..j], &mut |t| want.push_str(t));
                    let Some(split) = d.split(&s[i..j]) else {
                        continue;
                    };
                    answered += 1;
                    assert!(fed.is_ok(), "{s:x?} {i}..{j}");
                    let got: String = split.head.into_iter().chain(split.body.chars()).collect();
                    assert_eq!(got, want, "{s:x?} {i}..{j}");
                    let mut short = d.clone();
                    short.keep(&split, j - i);
                    assert_eq!(
                        short.partial[..short.plen],
                        full.partial[..full.plen],
                        "{s:x?} {i}..{j}"
                    );
                    assert_eq!(short.consumed, full.consumed);
                }
            }
        }
        assert!(answered > 100, "{answered}");
    }

    #[test]
    fn strict_offsets() {
        assert_eq!(
            run(&[b"ab", b"c\xff"], false),
            Err(Error::InvalidUtf8 { offset: 3 })
        );
        assert_eq!(
            run(&[b"a\xe6", b"\x97x"], false),
            Err(Error::InvalidUtf8 { offset: 1 })
        );
        assert_eq!(
            run(&[b"a\xe6\x97"], false),
            Err(Error::TruncatedUtf8 { offset: 1 })
        );
        assert_eq!(run(&[b"a\xe6", b"\x97\xa5"], false).as_deref(), Ok("a日"));
    }
}

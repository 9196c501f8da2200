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
    /// Whether part of a character is waiting.
    pub(crate) fn has_partial(&self) -> bool {
        self.plen > 0
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
        loop {
            match std::str::from_utf8(&input[i..]) {
                Ok(s) => {
                    if !s.is_empty() {
                        sink(s);
                    }
                    break;
                }
                Err(e) => {
                    let v = e.valid_up_to();
                    if v > 0 {
                        // The prefix was just validated.
                        sink(std::str::from_utf8(&input[i..i + v]).unwrap_or_default());
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

//! Structured inputs inside the agreement domain (the generator of `tests/differential.rs`,
//! driven by the fuzzer's bytes instead of an RNG): equal to kindaxml 0.1.0.
#![no_main]

use kindaxml_stream::parse;
use libfuzzer_sys::fuzz_target;

#[path = "../../tests/common/agreement.rs"]
mod agreement;
use agreement::{gen_config, gen_input, ours_normal, theirs_normal, Choose};

/// Choices read from the fuzzer's bytes (zeros once they run out).
struct Bytes<'a>(&'a [u8]);

impl Choose for Bytes<'_> {
    fn below(&mut self, n: usize) -> usize {
        let (b, rest) = match self.0 {
            [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as usize, rest),
            [a] => (*a as usize, &[][..]),
            [] => (0, &[][..]),
        };
        self.0 = rest;
        b % n
    }
}

fuzz_target!(|data: &[u8]| {
    let mut src = Bytes(data);
    let g = gen_config(&mut src);
    let input = gen_input(&mut src, &g);
    let theirs = theirs_normal(&kindaxml::parse(&input, &g.kconfig));
    let ours = ours_normal(&parse(&input, &g.config));
    assert_eq!(ours, theirs, "input {input:?}");
});

//! A document as values with its positions shifted, to compare the events of a parser
//! started mid-input (`StreamParser::is_restartable`) with `parse()` of the whole: shared by
//! `tests/restart.rs` and the `restart` fuzz target.
#![allow(dead_code)]

use kindaxml_stream::{parse, Annotation, Close, Config, Event};

/// An annotation as values, positions shifted by `src` (source) and `out` (output).
#[derive(Debug, PartialEq)]
pub struct Ann {
    pub tag: String,
    pub attrs: String,
    pub source_offset: usize,
    pub span: Option<(usize, usize)>,
    pub close: String,
}

pub fn ann(a: &Annotation, src: usize, out: usize) -> Ann {
    let close = match a.close() {
        Some(Close::EndTag { offset }) => format!("end tag at {}", offset + src),
        Some(Close::Reopened { offset }) => format!("reopened at {}", offset + src),
        Some(Close::AutoClosed { offset }) => format!("autoclosed at {}", offset + src),
        other => format!("{other:?} {:?}", a.strategy()),
    };
    Ann {
        tag: a.tag().to_string(),
        // Grouped by name, names sorted: equal whenever the attributes are (`Attrs`'s `==`
        // ignores their order, and so does the canonical merge).
        attrs: format!("{:?}", a.attrs().grouped()),
        source_offset: a.source_offset() + src,
        span: a.span().map(|r| (r.start + out, r.end + out)),
        close,
    }
}

/// Canonical segments (text, annotations) and markers (position, annotation).
#[derive(Debug, Default, PartialEq)]
pub struct View {
    pub segments: Vec<(String, Vec<Ann>)>,
    pub markers: Vec<(usize, Ann)>,
}

impl View {
    /// Adds events whose positions start at `src` / `out`, merging equal neighbours as
    /// the canonical form does (on tag and attributes; the first segment's list stays).
    pub fn push(&mut self, events: &[Event], src: usize, out: usize) {
        for e in events {
            match e {
                Event::Text(s) => {
                    let anns: Vec<Ann> = s.annotations().iter().map(|a| ann(a, src, out)).collect();
                    if let Some((text, last)) = self.segments.last_mut() {
                        let same = last.len() == anns.len()
                            && last
                                .iter()
                                .zip(&anns)
                                .all(|(x, y)| x.tag == y.tag && x.attrs == y.attrs);
                        if same {
                            text.push_str(s.text());
                            continue;
                        }
                    }
                    self.segments.push((s.text().to_string(), anns));
                }
                Event::Marker(m) => self
                    .markers
                    .push((m.pos() + out, ann(m.annotation(), src, out))),
            }
        }
    }
}

/// `parse()` of the whole input as a view.
pub fn whole(input: &str, config: &Config) -> View {
    let doc = parse(input, config);
    View {
        segments: doc
            .segments()
            .iter()
            .map(|s| {
                let anns = s.annotations().iter().map(|a| ann(a, 0, 0)).collect();
                (s.text().to_string(), anns)
            })
            .collect(),
        markers: doc
            .markers()
            .iter()
            .map(|m| (m.pos(), ann(m.annotation(), 0, 0)))
            .collect(),
    }
}

//! The benchmark corpora (`benches/corpus.rs`): each shape's well-formed variant, which the
//! benches give to quick-xml's Reader, is XML that it reads to the end, and keeps the shape's
//! character (its text, its tag density, its nesting), so the comparison is like for like.

#[path = "../benches/corpus.rs"]
mod corpus;

use corpus::{corpus, well_formed, Shape};
use quick_xml::events::Event;

/// What quick-xml's Reader (end names checked) reports reading `xml` to the end.
#[derive(Debug, Default)]
struct Read {
    /// `Start` and `Empty` events, by name.
    elements: Vec<String>,
    max_depth: usize,
    /// The text content inside the root, references written back as `&name;`, unescaped.
    text: String,
}

fn read(xml: &str) -> Read {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut out = Read::default();
    let mut raw = String::new();
    let mut depth = 0usize;
    loop {
        match r.read_event() {
            Ok(Event::Start(e)) => {
                depth += 1;
                out.max_depth = out.max_depth.max(depth);
                out.elements.push(e.name().as_ref().to_string());
            }
            Ok(Event::Empty(e)) => out.elements.push(e.name().as_ref().to_string()),
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Text(t)) if depth > 0 => raw.push_str(&t),
            Ok(Event::GeneralRef(g)) => {
                raw.push('&');
                raw.push_str(&g);
                raw.push(';');
            }
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("rejected at byte {}: {e}", r.buffer_position()),
        }
    }
    assert_eq!(depth, 0, "elements left open");
    out.text = quick_xml::escape::unescape(&raw).unwrap().into_owned();
    out
}

const SIZES: [usize; 2] = [1 << 10, 64 << 10];

#[test]
fn every_shape_has_a_well_formed_variant_quick_xml_reads_to_the_end() {
    for shape in Shape::ALL {
        for size in SIZES {
            let xml = well_formed(shape, size, 1);
            // "About `size` bytes": past it by less than one unit (the longest, a prose
            // list of three sentences, is under 400 bytes) and the root's end tag.
            assert!(
                xml.len() >= size && xml.len() < size + 512,
                "{} at {size}: {} bytes",
                shape.name(),
                xml.len()
            );
            let read = read(&xml);
            assert_eq!(read.elements.first().map(String::as_str), Some("answer"));
            assert_eq!(xml, well_formed(shape, size, 1), "not deterministic");
        }
    }
}

#[test]
fn escaped_shapes_keep_the_shapes_text() {
    for shape in [Shape::Plain, Shape::LtFlood, Shape::AmpFlood] {
        for size in SIZES {
            let read = read(&well_formed(shape, size, 7));
            assert_eq!(
                read.elements,
                ["answer"],
                "{}: markup only in the root",
                shape.name()
            );
            // The root's own line break, then the shape's text from its start.
            let text = read.text.strip_prefix('\n').unwrap().trim_end_matches('\n');
            assert!(
                text.len() * 3 >= size,
                "{}: {} bytes of text",
                shape.name(),
                text.len()
            );
            assert_eq!(text, corpus(shape, text.len(), 7), "{}", shape.name());
        }
    }
}

#[test]
fn tagged_shapes_keep_their_tag_density() {
    // Elements per KiB in the variant against tag starts (`<` and a letter) per KiB in the
    // shape: the variant writes each tag once as an element (a postfix cite around the
    // text before it), so the two agree within a small factor.
    for shape in [Shape::Prose, Shape::Dense, Shape::Unicode, Shape::OneLine] {
        let size = 64 << 10;
        let xml = well_formed(shape, size, 1);
        let elements = read(&xml).elements.len() - 1;
        let src = corpus(shape, size, 1);
        let tags = src
            .as_bytes()
            .windows(2)
            .filter(|w| w[0] == b'<' && w[1].is_ascii_alphabetic())
            .count();
        let ratio = (elements as f64 / xml.len() as f64) / (tags as f64 / src.len() as f64);
        assert!(
            (0.5..=2.0).contains(&ratio),
            "{}: {elements} elements in {} bytes against {tags} tags in {} bytes",
            shape.name(),
            xml.len(),
            src.len()
        );
    }
}

#[test]
fn deep_nest_variant_nests_as_deep_as_its_size_allows() {
    for size in SIZES {
        let read = read(&well_formed(Shape::DeepNest, size, 1));
        // The root, then two elements per 14 bytes (`<a><b>` and `</b></a>`).
        assert!(
            read.max_depth * 7 >= size - 64,
            "depth {} at {size}",
            read.max_depth
        );
        assert_eq!(read.text.trim(), "deep");
    }
}

#[test]
fn open_quote_variant_closes_every_attribute() {
    let xml = well_formed(Shape::OpenQuote, 64 << 10, 1);
    let mut r = quick_xml::Reader::from_str(&xml);
    let mut values = 0;
    loop {
        match r.read_event().unwrap() {
            Event::Empty(e) => {
                let a = e.attributes().next().unwrap().unwrap();
                assert_eq!(a.key.as_ref(), "x");
                assert_eq!(
                    quick_xml::escape::unescape(&a.value).unwrap(),
                    "text <b y=1 "
                );
                values += 1;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert!(values * 25 >= (64 << 10) - 64, "{values} attributes");
}

/// An annotation as plain values: its tag, its attributes and the offset of its `<`.
type PlainAnnotation = (String, Vec<(String, String)>, usize);

/// A document as plain values: its text, each segment's text with its annotations
/// (outermost first), and each marker's position with its annotation.
type Plain = (
    String,
    Vec<(String, Vec<PlainAnnotation>)>,
    Vec<(usize, PlainAnnotation)>,
);

fn plain_ours(d: &kindaxml_stream::Document) -> Plain {
    let ann = |a: &kindaxml_stream::Annotation| {
        let attrs = a.attrs().iter();
        let attrs = attrs.map(|(k, v)| (k.to_string(), v.as_str().unwrap().to_string()));
        (a.tag().to_string(), attrs.collect(), a.source_offset())
    };
    (
        d.text().to_string(),
        d.segments()
            .iter()
            .map(|s| {
                (
                    s.text().to_string(),
                    s.annotations().iter().map(ann).collect(),
                )
            })
            .collect(),
        d.markers()
            .iter()
            .map(|m| (m.pos(), ann(m.annotation())))
            .collect(),
    )
}

fn plain_quick_xml(d: &corpus::QxDocument, tags: &[&str]) -> Plain {
    let ann = |i: u32| {
        let a = &d.annotations[i as usize];
        let attrs = d.attr_pairs[a.attrs.clone()].iter();
        let attrs =
            attrs.map(|(k, v)| (d.attr_text[k.clone()].into(), d.attr_text[v.clone()].into()));
        (
            tags[a.tag as usize].to_string(),
            attrs.collect(),
            a.source_offset,
        )
    };
    (
        d.text.clone(),
        d.segments
            .iter()
            .map(|(t, s)| {
                (
                    d.text[t.clone()].to_string(),
                    d.stacks[s.clone()].iter().map(|&i| ann(i)).collect(),
                )
            })
            .collect(),
        d.markers.iter().map(|&(pos, i)| (pos, ann(i))).collect(),
    )
}

/// The quick-xml program the benches compare `parse()` with on equal work
/// (`corpus::quick_xml_document`, DESIGN.md decision 109) gives the document `parse()` gives,
/// segment for segment, on every shape's well-formed variant, annotations and their source
/// offsets included, and those offsets point at their tags.
#[test]
fn quick_xml_document_is_the_document_parse_gives() {
    let tags = ["cite", "note", "todo"];
    let config = corpus::compat_config();
    for shape in Shape::ALL {
        for size in SIZES {
            let xml = well_formed(shape, size, 3);
            let qx = corpus::quick_xml_document(&xml, &tags);
            let ours = kindaxml_stream::parse(&xml, &config);
            // (The shapes with recognized tags have one in every KiB or less.)
            let tagged = [Shape::Prose, Shape::Dense, Shape::Unicode, Shape::OneLine];
            assert!(
                qx.annotations.len() * 1000 >= size || !tagged.contains(&shape),
                "{}: {} annotations",
                shape.name(),
                qx.annotations.len()
            );
            assert_eq!(
                plain_quick_xml(&qx, &tags),
                plain_ours(&ours),
                "{} at {size}",
                shape.name()
            );
            for a in &qx.annotations {
                let at = &xml[a.source_offset..];
                assert!(
                    at.starts_with(&format!("<{}", tags[a.tag as usize])),
                    "{at:.20}"
                );
            }
        }
    }
}

/// The lines the instruction counts per construct read (`corpus::CONSTRUCTS`): each line's
/// well-formed form is XML quick-xml reads to the end, and quick-xml building the document
/// gives the document `parse()` gives (as on the shapes, decision 109); the corpus's form of
/// the line gives `parse()` as many annotations and markers as the well-formed form (the same
/// markup, written two ways: a postfix cite there is an element around the text it cites),
/// one per line.
#[test]
fn construct_lines_are_the_same_markup_either_way() {
    let tags = ["cite", "note", "todo"];
    let config = corpus::compat_config();
    let lines = 5;
    // The annotations (each once, by where its tag is) and the markers.
    let counted = |d: &kindaxml_stream::Document| {
        let mut at: Vec<usize> = d
            .segments()
            .iter()
            .flat_map(|s| s.annotations())
            .map(|a| a.source_offset())
            .collect();
        at.sort_unstable();
        at.dedup();
        (at, d.markers().len())
    };
    for (name, _, _) in corpus::CONSTRUCTS {
        let wf = corpus::construct(name, lines, true).unwrap();
        let as_written = corpus::construct(name, lines, false).unwrap();
        // (quick-xml reads it to the end, every element closed, or `read` fails.)
        assert!(read(&wf).text.starts_with("\nshipped"), "{name}");
        let ours_wf = kindaxml_stream::parse(&wf, &config);
        let qx = corpus::quick_xml_document(&wf, &tags);
        assert_eq!(plain_quick_xml(&qx, &tags), plain_ours(&ours_wf), "{name}");
        let (spans, markers) = counted(&kindaxml_stream::parse(&as_written, &config));
        let (wf_spans, wf_markers) = counted(&ours_wf);
        assert_eq!(
            (spans.len(), markers),
            (wf_spans.len(), wf_markers),
            "{name}"
        );
        let expected = match name {
            "text" | "unknown_tags" => (0, 0),
            "todo_marker" => (0, lines),
            _ => (lines, 0),
        };
        assert_eq!((spans.len(), markers), expected, "{name}");
    }
    assert!(corpus::construct("no such construct", 1, false).is_none());
}

/// The floor's document (`Document::rebuilt`, DESIGN.md decision 115) is the document
/// `parse()` gives, on every shape as the benchmarks time it: the shape itself, past one
/// 64 KiB slice of output (so `parse()`'s document holds several text buffers where the
/// rebuilt one holds one), and every construct line.
#[test]
fn the_floors_document_is_the_document_parse_gives() {
    let config = corpus::compat_config();
    let mut inputs: Vec<(String, String)> = Vec::new();
    for shape in Shape::ALL {
        for size in [1 << 10, 200 << 10] {
            inputs.push((
                format!("{} at {size}", shape.name()),
                corpus(shape, size, 1),
            ));
        }
    }
    for (name, _, _) in corpus::CONSTRUCTS {
        inputs.push((
            name.to_string(),
            corpus::construct(name, 50, false).unwrap(),
        ));
    }
    // (Past one slice: prose keeps most of its bytes as text.)
    let prose = kindaxml_stream::parse(&corpus(Shape::Prose, 200 << 10, 1), &config);
    assert!(prose.len() > 64 << 10, "{}", prose.len());
    for (what, input) in &inputs {
        let doc = kindaxml_stream::parse(input, &config);
        let floor = doc.rebuilt();
        // (Equality covers the segments, their text, starts and annotations, and the
        // markers; not the length, which `text()` takes as its room.)
        assert_eq!(floor, doc, "{what}");
        assert_eq!(floor.len(), doc.len(), "{what}");
    }
}

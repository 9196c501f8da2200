//! Public API behaviour: promptness of single updates, errors, close information, auto traits.

mod common;

use common::soup::{random_config, random_input};
use common::{random_cuts, split_at, Rng};
use kindaxml_stream::{
    parse, Annotation, Close, Config, ConfigError, Document, Error, Event, Strategy, StreamParser,
};

fn texts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Text(s) => Some(s.text().to_string()),
            Event::Marker(_) => None,
        })
        .collect()
}

#[test]
fn chunk_ending_inside_a_multibyte_character() {
    let mut p = StreamParser::new(&Config::default());
    let ev: Vec<Event> = p.update_bytes(b"Hello \xe6\x97").unwrap().collect();
    assert_eq!(texts(&ev), ["Hello "]);
    assert_eq!(p.output_len(), 6, "the partial character is not output yet");
    let ev: Vec<Event> = p.update_bytes(b"\xa5!").unwrap().collect();
    assert_eq!(texts(&ev), ["日!"]);
    assert!(p.finish().unwrap().next().is_none());
}

/// The start of a character that a byte chunk leaves incomplete is input pending, both
/// where it waits in the UTF-8 decoder and where it waits at the head of the queue of
/// input that cannot make anything final yet (a line held for a `retro_line` cite:
/// decision 96).
#[test]
fn an_incomplete_character_is_pending_input() {
    let line = Config::default()
        .with_tags(["cite"])
        .unwrap()
        .with_default_recovery(Strategy::RetroLine);
    for config in [Config::default(), line] {
        let mut p = StreamParser::new(&config);
        let mut doc = Document::default();
        doc.extend(p.update_bytes(b"Held \xe6\x97").unwrap());
        assert_eq!(p.pending_input_bytes(), 2);
        doc.extend(p.update_bytes(b"\xa5 text.\n").unwrap());
        assert_eq!(p.pending_input_bytes(), 0);
        doc.extend(p.finish().unwrap());
        assert_eq!(doc, parse("Held \u{65e5} text.\n", &config));
    }
}

#[test]
fn chunk_ending_inside_constructs_holds_only_the_construct() {
    let config = Config::default()
        .with_tags(["cite"])
        .unwrap()
        .with_default_recovery(Strategy::ForwardUntilTag);
    for (chunk, held) in [
        ("text <ci", 3),
        ("text &am", 3),
        ("text <![CDA", 6),
        ("text </ci", 4),
        ("text <", 1),
    ] {
        let mut p = StreamParser::new(&config);
        let ev: Vec<Event> = p.update(chunk).unwrap().collect();
        assert_eq!(texts(&ev), ["text "], "{chunk}");
        assert_eq!(p.pending_input_bytes(), held, "{chunk}");
        assert_eq!(p.held_output_bytes(), 0, "{chunk}");
    }
}

/// SPEC §6 / issue acceptance: with no retro tag configured, an update emits all of its
/// plain text except an unfinished construct at its very end.
#[test]
fn no_retro_tags_means_nothing_held_but_a_trailing_construct() {
    let config = Config::default()
        .with_tags(["note", "todo"])
        .unwrap()
        .with_default_recovery(Strategy::ForwardUntilTag);
    let pieces = [
        "plain ",
        "text",
        "\n",
        "日本語",
        "&amp;",
        "&",
        "<",
        "<3",
        "<weird x=1>",
        "</weird>",
        "<![CDATA[a<b]]>",
        "&#x41;",
        "<john@x.org>",
        " a < b ",
        "\r\n",
        "</note>",
        "<todo/>",
        "<a/b>",
    ];
    let mut rng = Rng::new(common::seed(5));
    for _ in 0..300 {
        let mut input = String::new();
        for _ in 0..1 + rng.below(12) {
            input.push_str(rng.pick_str(&pieces));
        }
        let mut p = StreamParser::new(&config);
        let mut doc = Document::new();
        let bytes = input.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let j = (i + 1 + rng.below(6)).min(bytes.len());
            doc.extend(p.update_bytes(&bytes[i..j]).unwrap());
            assert_eq!(
                p.held_output_bytes(),
                0,
                "held output after {:?} of {input:?}",
                &input.as_bytes()[..j]
            );
            i = j;
        }
        doc.extend(p.finish().unwrap());
        assert_eq!(doc, parse(&input, &config));
    }
}

#[test]
fn forward_content_is_emitted_before_its_tag_closes() {
    let config = Config::default()
        .with_tags(["note"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap();
    let mut p = StreamParser::new(&config);
    let ev: Vec<Event> = p.update("<note>Check the logs").unwrap().collect();
    let Event::Text(seg) = &ev[0] else {
        panic!("expected text")
    };
    assert_eq!(seg.text(), "Check the logs");
    let ann = seg.annotations()[0].clone();
    assert_eq!(ann.tag(), "note");
    assert_eq!(ann.close(), None, "still open");
    let _ = p.update(" now</note>").unwrap().count();
    assert_eq!(
        ann.close(),
        Some(Close::EndTag { offset: 24 }),
        "filled in once known, in the same shared annotation"
    );
    assert_eq!(ann.strategy(), None);
    assert_eq!(ann.source_offset(), 0);
}

/// An annotation already out in an event learns how its tag closed in the update that
/// closes it, also while a postfix tag (`retro_line`, the compat preset's) holds the line
/// and input that cannot end the hold waits unparsed (DESIGN.md, decisions 48 and 50):
/// by its end tag, or by reaching `max_span_bytes`, fed in chunks of every size to 8.
#[test]
fn an_emitted_annotation_learns_its_close_in_the_closing_update() {
    let base = Config::kindaxml_compat()
        .with_tags(["cite", "note"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap();
    let first = "<note>abc\n"; // emits `abc` with the open note's annotation
    let end_tag = ("def </note> more", base.clone());
    // Content `abc\n` is 4 bytes; the span limit of 16 closes the note 12 bytes later.
    let limit = (
        "defghijklmnopqrstu",
        base.clone().with_max_span_bytes(16).unwrap(),
    );
    for (rest, config) in [end_tag, limit] {
        // The close as SPEC §3 and §8a give it, and how much of `rest` must be read first.
        let (want, needed) = if rest.contains("</note>") {
            let lt = rest.find("</note>").unwrap();
            (
                Close::EndTag {
                    offset: first.len() + lt,
                },
                lt + "</note>".len(),
            )
        } else {
            (Close::SpanLimit, 16 - "abc\n".len())
        };
        for size in 1..=8 {
            let mut p = StreamParser::new(&config);
            let ev: Vec<Event> = p.update(first).unwrap().collect();
            let Event::Text(seg) = &ev[0] else {
                panic!("expected text")
            };
            assert_eq!(seg.text(), "abc");
            let note = seg.annotations()[0].clone();
            let mut fed = 0;
            for chunk in rest.as_bytes().chunks(size) {
                let _ = p.update_bytes(chunk).unwrap().count();
                fed += chunk.len();
                let got = note.close();
                if fed >= needed {
                    assert_eq!(got, Some(want), "{rest:?} in {size}-byte chunks, {fed} fed");
                } else {
                    assert_eq!(got, None, "{rest:?} in {size}-byte chunks, {fed} fed");
                }
            }
        }
    }
}

#[test]
fn recovered_annotations_say_why() {
    let config = Config::default().with_tags(["cite", "todo"]).unwrap();
    let doc = parse(
        "A <cite id=1>. B <cite id=2>. C <cite id=3> <todo/>",
        &config,
    );
    let closes: Vec<_> = doc
        .segments()
        .iter()
        .flat_map(|s| s.annotations())
        .map(|a| {
            (
                a.attrs()
                    .get("id")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_string(),
                a.close(),
                a.strategy(),
            )
        })
        .collect();
    assert_eq!(
        closes,
        [
            (
                "1".into(),
                Some(Close::AutoClosed { offset: 17 }),
                Some(Strategy::RetroClaim)
            ),
            (
                "2".into(),
                Some(Close::AutoClosed { offset: 32 }),
                Some(Strategy::RetroClaim)
            ),
            (
                "3".into(),
                Some(Close::AutoClosed { offset: 44 }),
                Some(Strategy::RetroClaim)
            ),
        ]
    );
    let long = "x".repeat(20);
    let limited = Config::default()
        .with_tags(["note"])
        .unwrap()
        .with_default_recovery(Strategy::ForwardUntilTag)
        .with_max_span_bytes(8)
        .unwrap();
    let doc = parse(&format!("<note>{long}"), &limited);
    assert_eq!(doc.segments()[0].text(), "xxxxxxxx");
    assert_eq!(
        doc.segments()[0].annotations()[0].close(),
        Some(Close::SpanLimit)
    );
    let doc = parse("<note>abc", &limited);
    assert_eq!(
        doc.segments()[0].annotations()[0].close(),
        Some(Close::EndOfInput)
    );
}

#[test]
fn errors_after_finish_and_on_bad_input() {
    let mut p = StreamParser::new(&Config::default());
    let _ = p.update("x").unwrap().count();
    let _ = p.finish().unwrap().count();
    assert_eq!(p.update("y").err(), Some(Error::Finished));
    assert_eq!(p.update_bytes(b"y").err(), Some(Error::Finished));
    // Empty chunks too, also right after plain text that took the short path.
    assert_eq!(p.update("").err(), Some(Error::Finished));
    assert_eq!(p.update_bytes(b"").err(), Some(Error::Finished));
    assert_eq!(p.finish().err(), Some(Error::Finished));
    let mut q = StreamParser::new(&Config::default().with_tags(["cite"]).unwrap());
    for t in ["Held", " line", " of", " text"] {
        assert_eq!(q.update(t).unwrap().count(), 0);
    }
    // A chunk that waits unparsed with the rest of its line is validated when the wait
    // ends: its bad byte is reported by the call that ends it, here an empty update.
    let pending = q.pending_input_bytes();
    assert_eq!(q.update_bytes(b" \xff").unwrap().count(), 0);
    assert_eq!(q.pending_input_bytes(), pending + 2);
    assert_eq!(q.update("").err(), Some(Error::InvalidUtf8 { offset: 18 }));
    assert_eq!(q.update("").err(), Some(Error::Poisoned { offset: 18 }));
    assert_eq!(
        q.update_bytes(b"").err(),
        Some(Error::Poisoned { offset: 18 })
    );
    assert_eq!(
        q.update(" more").err(),
        Some(Error::Poisoned { offset: 18 })
    );
    assert_eq!(Error::Finished.to_string(), "parser already finished");

    let mut p = StreamParser::new(&Config::default());
    let ev: Vec<Event> = p.update_bytes(b"abc\xe6\x97").unwrap().collect();
    assert_eq!(texts(&ev), ["abc"]);
    let err = p.finish().err().unwrap();
    assert_eq!(err, Error::TruncatedUtf8 { offset: 3 });
    assert_eq!(
        err.to_string(),
        "input ends inside a UTF-8 sequence that starts at byte offset 3"
    );
    assert!(
        p.finish().unwrap().next().is_none(),
        "a second finish ends the input before it"
    );

    let mut p = StreamParser::new(&Config::default());
    let err = p.update_bytes(b"ok\xff").err().unwrap();
    assert_eq!(err.to_string(), "invalid UTF-8 at input byte offset 2");
    assert_eq!(
        texts(&p.finish().unwrap().collect::<Vec<_>>()),
        ["ok"],
        "text before the bad byte is kept"
    );

    let mut p = StreamParser::new(&Config::default()).with_lossy_utf8(true);
    let mut d = Document::new();
    d.extend(p.update_bytes(b"ok\xff <x>\xe6").unwrap());
    d.extend(p.finish().unwrap());
    assert_eq!(d.text(), "ok\u{FFFD} <x>\u{FFFD}");
}

#[test]
fn config_errors_name_the_field() {
    let e = Config::default().with_tags(["cite", "9lives"]).unwrap_err();
    assert_eq!(
        e,
        ConfigError::InvalidTagName {
            field: "recognized_tags".into(),
            name: "9lives".into()
        }
    );
    assert!(e.to_string().contains("`9lives`") && e.to_string().contains("recognized_tags"));
    let e = Config::default()
        .with_tags(["cite", "Cite"])
        .unwrap()
        .with_case_sensitive_tags(false)
        .unwrap_err();
    assert!(matches!(e, ConfigError::Conflict { .. }), "{e}");
    assert!(Config::default().with_max_span_bytes(0).is_err());
    assert!(Config::default()
        .with_recovery("a b", Strategy::Noop)
        .is_err());
    let e = Config::default().with_max_tag_bytes(0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "config field `max_tag_bytes`: must be at least 1"
    );
}

#[cfg(feature = "serde")]
#[test]
fn json_config_errors_name_the_field() {
    for (json, msg) in [
        (
            r#"{"recognised_tags":[]}"#,
            "config: unknown field `recognised_tags`",
        ),
        (
            r#"{"per_tag_recovery":{"cite":"retro"}}"#,
            "config field `per_tag_recovery.cite`: unknown strategy `retro`",
        ),
        (
            r#"{"unknown_mode":"keep"}"#,
            "config field `unknown_mode`: unknown mode `keep`",
        ),
        (
            r#"{"trim_punctuation":"yes"}"#,
            "config field `trim_punctuation`: expected true or false",
        ),
        (
            r#"{"recognized_tags":["ok","<bad>"]}"#,
            "`<bad>` is not a tag name",
        ),
        (
            r#"{"max_span_bytes":-1}"#,
            "config field `max_span_bytes`: expected a positive integer",
        ),
        (
            r#"{"preset":"strict"}"#,
            "config field `preset`: unknown preset `strict`",
        ),
        (r#"[1]"#, "expected a JSON object"),
        (r#"{"#, "config: invalid JSON"),
    ] {
        let e = Config::from_json(json).unwrap_err().to_string();
        assert!(e.contains(msg), "{json}: {e}");
    }
    let c =
        Config::from_json(r#"{"preset":"kindaxml_compat","recognized_tags":["cite"]}"#).unwrap();
    assert_eq!(c, Config::kindaxml_compat().with_tags(["cite"]).unwrap());
}

#[cfg(feature = "serde")]
#[test]
fn json_output_shapes() {
    let config = Config::default()
        .with_tags(["cite", "todo"])
        .unwrap()
        .with_duplicate_attrs(kindaxml_stream::DuplicateAttrs::All);
    let doc = parse(
        "A \"q\" <cite z=2 id=1 flag id=3>. Start <todo b=2 a=1/> end",
        &config,
    );
    assert_eq!(
        doc.to_json(),
        r#"{"text":"A \"q\" . Start  end","segments":[{"text":"A \"q\"","ann":[{"tag":"cite","attrs":{"flag":true,"id":["1","3"],"z":"2"}}]},{"text":" . Start  end","ann":[]}],"markers":[{"pos":14,"tag":"todo","attrs":{"a":"1","b":"2"}}]}"#
    );
    let mut p = StreamParser::new(&config);
    let mut lines: Vec<String> = p
        .update("x <todo/>y")
        .unwrap()
        .map(|e| e.to_json())
        .collect();
    assert!(
        lines.is_empty(),
        "the line is held: a postfix cite could still claim it"
    );
    lines.extend(p.finish().unwrap().map(|e| e.to_json()));
    assert_eq!(
        lines,
        [
            r#"{"type":"text","text":"x ","ann":[]}"#,
            r#"{"type":"marker","pos":2,"tag":"todo","attrs":{}}"#,
            r#"{"type":"text","text":"y","ann":[]}"#
        ]
    );
}

#[test]
fn public_types_are_send_sync_unpin() {
    fn check<T: Send + Sync + Unpin + 'static>() {}
    check::<StreamParser>();
    check::<Config>();
    check::<Document>();
    check::<Event>();
    check::<kindaxml_stream::Segment>();
    check::<kindaxml_stream::Annotation>();
    check::<Error>();
}

#[test]
fn attribute_strings_inline_or_heap_behave_the_same() {
    use kindaxml_stream::{AttrStr, AttrValue};
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |s: &AttrStr| {
        let mut h = DefaultHasher::new();
        s.hash(&mut h);
        h.finish()
    };
    // 22 bytes is the inline capacity; 23 goes to the heap; multibyte text either way.
    for v in [
        "",
        "1",
        "abcdefghijklmnopqrstuv",
        "abcdefghijklmnopqrstuvw",
        "日本語の引用",
        "日本語の引用と長い説明文",
    ] {
        let cfg = Config::default().with_tags(["cite"]).unwrap();
        let doc = parse(&format!("x <cite id=\"{v}\" k>y</cite>"), &cfg);
        let ann = &doc.segments()[1].annotations()[0];
        let got = ann.attrs().get("id").unwrap();
        assert_eq!(got.as_str(), Some(v));
        assert_eq!(ann.attrs().get("k"), Some(&AttrValue::True));
        let a = AttrStr::from(v);
        let b = AttrStr::from(v.to_string());
        assert_eq!(a, b);
        assert_eq!(a, *v);
        assert_eq!(&*a, v);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(String::from(a.clone()), v);
        assert_eq!(format!("{a}"), v);
        assert_eq!(format!("{a:?}"), format!("{v:?}"));
        assert_eq!(got, &AttrValue::Str(a));
    }
    let mut sorted = vec![
        AttrStr::from("b"),
        AttrStr::from("a".repeat(30)),
        AttrStr::from("a"),
    ];
    sorted.sort();
    assert_eq!(sorted, ["a".to_string(), "a".repeat(30), "b".to_string()]);
}

#[test]
fn segments_of_one_update_share_a_buffer_but_read_as_their_own_text() {
    let cfg = Config::default().with_tags(["b"]).unwrap();
    let mut p = StreamParser::new(&cfg);
    let events: Vec<Event> = p
        .update("one <b>two</b> three <b>four</b> five")
        .unwrap()
        .collect();
    // (The last word waits: a later byte could still continue it.)
    assert_eq!(texts(&events), ["one ", "two", " three ", "four", " "]);
    // Each segment stands alone: dropping the others, or taking its text out, keeps it whole.
    let mut segs: Vec<_> = events
        .into_iter()
        .filter_map(|e| match e {
            Event::Text(s) => Some(s),
            Event::Marker(_) => None,
        })
        .collect();
    let last = segs.pop().unwrap();
    drop(segs);
    assert_eq!((last.start(), last.end()), (18, 19));
    assert_eq!(last.into_text(), " ");
    assert_eq!(texts(&p.finish().unwrap().collect::<Vec<_>>()), ["five"]);
    // Merging across updates (separate buffers) and within one (same buffer) give equal text.
    let mut a = StreamParser::new(&cfg);
    let mut doc = Document::new();
    for c in ["on", "e <b>tw", "o</b> th", "ree"] {
        doc.extend(a.update(c).unwrap());
    }
    doc.extend(a.finish().unwrap());
    assert_eq!(doc, parse("one <b>two</b> three", &cfg));
    assert_eq!(doc.text(), "one two three");
    assert_eq!(doc.segments()[2].text(), " three");
}

/// The consuming adapters of `Events` (`count`, `fold` and what builds on it) see every
/// event of an update, in order, as iterating by hand does; and consume them all.
#[test]
fn events_count_and_fold_see_every_event() {
    let config = Config::default().with_tags(["cite", "note"]).unwrap();
    let chunks = [
        "Intro <note>one</note> two <cite id=1>.\n",
        "More <note>three",
        "",
        "</note> end <cite id=2>.\n",
    ];
    let by_hand: Vec<Vec<Event>> = {
        let mut p = StreamParser::new(&config);
        let mut out: Vec<Vec<Event>> = chunks
            .iter()
            .map(|c| {
                // A `for` loop steps the iterator with `next`.
                let mut v = Vec::new();
                for e in p.update(c).unwrap() {
                    v.push(e);
                }
                v
            })
            .collect();
        out.push(p.finish().unwrap().collect());
        out
    };
    assert!(by_hand.iter().filter(|v| !v.is_empty()).count() >= 2);
    let mut p = StreamParser::new(&config);
    let mut counts: Vec<usize> = chunks
        .iter()
        .map(|c| p.update(c).unwrap().count())
        .collect();
    counts.push(p.finish().unwrap().count());
    let want: Vec<usize> = by_hand.iter().map(Vec::len).collect();
    assert_eq!(counts, want);
    let gather = |v: Vec<Event>, e: Event| {
        let mut v = v;
        v.push(e);
        v
    };
    let mut p = StreamParser::new(&config);
    let mut folded: Vec<Vec<Event>> = chunks
        .iter()
        .map(|c| p.update(c).unwrap().fold(Vec::new(), gather))
        .collect();
    folded.push(p.finish().unwrap().fold(Vec::new(), gather));
    assert_eq!(folded, by_hand);
}

/// A config compiles once and its clones share that; a changed clone is compiled afresh.
#[test]
fn a_config_reused_then_changed_parses_by_its_current_settings() {
    let input = "Sky is blue <cite id=1>. <note>Check</note> done";
    let cited = |doc: &Document| -> Vec<(String, Vec<String>)> {
        doc.segments()
            .iter()
            .map(|s| {
                let tags = s.annotations().iter().map(|a| a.tag().to_string());
                (s.text().to_string(), tags.collect())
            })
            .collect()
    };
    let owned = |v: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        v.iter()
            .map(|(t, a)| (t.to_string(), a.iter().map(|x| x.to_string()).collect()))
            .collect()
    };
    let cite = Config::default().with_tags(["cite"]).unwrap();
    let want_cite = owned(&[
        ("Sky is blue", &["cite"]),
        (" . <note>Check</note> done", &[]),
    ]);
    for _ in 0..3 {
        assert_eq!(cited(&parse(input, &cite)), want_cite);
    }
    let mut p = StreamParser::new(&cite);
    let mut doc = Document::from_events(p.update(input).unwrap());
    doc.extend(p.finish().unwrap());
    assert_eq!(cited(&doc), want_cite);
    // Changing a clone of the compiled config, and then the config itself.
    let both = cite.clone().add_tags(["note"]).unwrap();
    assert_eq!(
        cited(&parse(input, &both)),
        owned(&[
            ("Sky is blue", &["cite"]),
            (" . ", &[]),
            ("Check", &["note"]),
            (" done", &[]),
        ])
    );
    assert_eq!(cited(&parse(input, &cite)), want_cite);
    let none = cite.with_tags(["todo"]).unwrap();
    assert_eq!(
        cited(&parse(input, &none)),
        owned(&[("Sky is blue <cite id=1>. <note>Check</note> done", &[])])
    );
}

/// `CompiledConfig::unshared` (DESIGN.md, decisions 108 and 117): a copy made on another
/// thread parses as the original does, whole and in random chunks, under random
/// configurations. Its annotations name their tags from the process's interned strings, the
/// very strings the original's use (no reference count to share): every name these
/// configurations use is short, and they are few.
#[test]
fn an_unshared_compiled_config_parses_the_same() {
    let mut rng = Rng::new(common::seed(108));
    let mut named = 0;
    let cases = common::cases(600);
    for case in 0..cases {
        let config = random_config(&mut rng);
        let n = 1 + rng.below(30);
        let input = random_input(&mut rng, n);
        let want = parse(&input, &config);
        let shared = config.compile();
        let k = rng.below(12);
        let cuts = random_cuts(&mut rng, input.len(), k);
        let got = std::thread::scope(|s| {
            s.spawn(|| {
                let own = shared.unshared();
                let mut p = StreamParser::from_compiled(&own);
                let mut doc = Document::new();
                for piece in split_at(input.as_bytes(), &cuts) {
                    doc.extend(p.update_bytes(piece).expect("valid UTF-8"));
                }
                doc.extend(p.finish().expect("finish"));
                doc
            })
            .join()
            .expect("the parsing thread")
        });
        assert_eq!(got, want, "case {case}: {input:?} cut at {cuts:?}");
        for (a, b) in annotation_pairs(&got, &want) {
            assert_eq!(a.tag(), b.tag());
            assert_eq!(
                a.tag().as_ptr(),
                b.tag().as_ptr(),
                "case {case}: `{}` is not interned",
                a.tag()
            );
            named += 1;
        }
    }
    // (About one annotation in every other input; 370 of them with the default seed.)
    assert!(4 * named > cases, "only {named} annotations compared");
}

/// The annotations of two documents of the same shape, side by side: the segments' in
/// order, then the markers'.
fn annotation_pairs<'a>(
    got: &'a Document,
    want: &'a Document,
) -> impl Iterator<Item = (&'a Annotation, &'a Annotation)> + 'a {
    got.segments()
        .iter()
        .zip(want.segments())
        .flat_map(|(a, b)| a.annotations().iter().zip(b.annotations()))
        .chain(
            got.markers()
                .iter()
                .zip(want.markers())
                .map(|(a, b)| (a.annotation(), b.annotation())),
        )
}

/// Tag names are interned for the process (decision 117): configurations built apart
/// name their annotations from one string. A name longer than the interning limit (64
/// bytes) is held by reference count instead: each configuration has its own, and an
/// unshared copy (decision 108) its own again, made on the thread that asks.
#[test]
fn tag_names_are_interned_up_to_the_length_limit() {
    let long = format!("a{}", "x".repeat(64));
    let at_limit = format!("b{}", "y".repeat(63));
    let input = format!("One <cite id=1>. Two <{long}>two</{long}>. Three <{at_limit}/>.");
    let config = || {
        Config::default()
            .with_tags(["cite", long.as_str(), at_limit.as_str()])
            .expect("valid names")
    };
    let (c1, c2) = (config(), config());
    let (d1, d2) = (parse(&input, &c1), parse(&input, &c2));
    assert_eq!(d1, d2);
    let tags = |d: &Document| -> Vec<String> {
        annotation_pairs(d, d)
            .map(|(a, _)| a.tag().to_string())
            .collect()
    };
    assert_eq!(tags(&d1), ["cite", long.as_str(), at_limit.as_str()]);
    let compiled = c1.compile();
    let d3 = std::thread::scope(|s| {
        s.spawn(|| {
            let own = compiled.unshared();
            let mut p = StreamParser::from_compiled(&own);
            let mut doc = Document::from_events(p.update(&input).expect("not finished"));
            doc.extend(p.finish().expect("finish"));
            doc
        })
        .join()
        .expect("the parsing thread")
    });
    assert_eq!(d3, d1);
    for ((a, b), (_, c)) in annotation_pairs(&d1, &d2).zip(annotation_pairs(&d1, &d3)) {
        let (pa, pb, pc) = (a.tag().as_ptr(), b.tag().as_ptr(), c.tag().as_ptr());
        if a.tag().len() > 64 {
            assert!(
                pa != pb && pa != pc && pb != pc,
                "`{}` counted apart",
                a.tag()
            );
        } else {
            assert!(pa == pb && pa == pc, "`{}` interned", a.tag());
        }
    }
}

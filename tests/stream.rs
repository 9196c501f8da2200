//! The async layer: the `Stream` adapter and the tokio decoder only drive the parser, so they
//! must give exactly `parse()`'s document under any tokenization, stay prompt through the
//! adapter, carry upstream errors without losing text, and drop cleanly.

use std::time::Duration;

use bytes::Bytes;
use futures::channel::mpsc;
use futures::{stream, SinkExt, StreamExt};
use kindaxml_stream::{
    parse, Config, DecodeError, Document, Error, Event, KindaxmlDecoder, KindaxmlStreamExt,
    ParseStream, Strategy, StreamError,
};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

fn config() -> Config {
    Config::default()
        .with_tags(["cite", "note", "todo"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap()
        .with_raw_tags(["think"])
        .unwrap()
}

const SAMPLES: &[&str] = &[
    "We shipped <cite id=\"1\">last week</cite>.",
    "We shipped last week <cite id=1> <note>Details...</note>",
    "Alpha <note>bravo <cite id=9> charlie",
    "Start <todo id=3/> end",
    "AT&amp;T &lt;3 & more &#x41;&nbsp;",
    "Use `<cite id=1>` here <cite id=2>",
    "<think>a <b>c</b> <think>x</think> y</think>after",
    "The sky is blue <cite id=1>. Grass is green <cite id=2>.",
    "日本語 <cite id=1>。 ünïcödé\r\n```\n<cite>\n```\n",
];

fn collect_doc<E: std::fmt::Debug>(events: Vec<Result<Event, StreamError<E>>>) -> Document {
    events.into_iter().map(|e| e.expect("no error")).collect()
}

#[tokio::test]
async fn every_split_of_the_spec_examples_equals_parse() {
    let config = config();
    for s in SAMPLES {
        let want = parse(s, &config);
        let bytes = s.as_bytes();
        for i in 0..=bytes.len() {
            // Byte items may split a character.
            let items = vec![
                Bytes::copy_from_slice(&bytes[..i]),
                Bytes::copy_from_slice(&bytes[i..]),
            ];
            let got = collect_doc(stream::iter(items).kindaxml(&config).collect().await);
            assert_eq!(got, want, "{s:?} split at byte {i}");
            if s.is_char_boundary(i) {
                let items = vec![s[..i].to_string(), s[i..].to_string()];
                let got = collect_doc(stream::iter(items).kindaxml(&config).collect().await);
                assert_eq!(got, want, "{s:?} split at {i}");
            }
        }
        // One byte per token, as Vec<u8>; and &'static str tokens of one char.
        let items: Vec<Vec<u8>> = bytes.iter().map(|b| vec![*b]).collect();
        assert_eq!(
            collect_doc(stream::iter(items).kindaxml(&config).collect().await),
            want
        );
        let chars: Vec<&'static str> = (0..s.len())
            .filter(|&i| s.is_char_boundary(i))
            .map(|i| {
                let end = (i + 1..=s.len()).find(|&j| s.is_char_boundary(j)).unwrap();
                &s[i..end]
            })
            .collect();
        assert_eq!(
            collect_doc(stream::iter(chars).kindaxml(&config).collect().await),
            want
        );
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Upstream(&'static str);

#[tokio::test]
async fn upstream_error_mid_stream_keeps_the_text_before_it() {
    let config = config();
    let items: Vec<Result<String, Upstream>> = vec![
        Ok("We shipped last week <ci".into()),
        Ok("te id=1>. Then".into()),
        Err(Upstream("connection reset")),
        Ok("never parsed".into()),
    ];
    let out: Vec<_> = stream::iter(items).kindaxml(&config).collect().await;
    let (last, events) = out.split_last().unwrap();
    assert_eq!(
        last.as_ref().unwrap_err(),
        &StreamError::Source(Upstream("connection reset"))
    );
    let doc: Document = events.iter().map(|e| e.as_ref().unwrap().clone()).collect();
    assert_eq!(
        doc,
        parse("We shipped last week <cite id=1>. Then", &config)
    );
    assert_eq!(doc.segments()[0].text(), "We shipped last week");
}

#[tokio::test]
async fn invalid_utf8_is_a_typed_error_after_the_valid_text() {
    let items = vec![
        b"ok <ci".to_vec(),
        b"te id=1>".to_vec(),
        b"\xff tail".to_vec(),
    ];
    let out: Vec<_> = stream::iter(items).kindaxml(&config()).collect().await;
    let (last, events) = out.split_last().unwrap();
    assert_eq!(
        last.as_ref().unwrap_err(),
        &StreamError::Parse(Error::InvalidUtf8 { offset: 14 })
    );
    let doc: Document = events.iter().map(|e| e.as_ref().unwrap().clone()).collect();
    assert_eq!(doc, parse("ok <cite id=1>", &config()));
}

/// Promptness through the adapter: an upstream that stays `Pending` between tokens; each
/// event must arrive before the next token is even produced.
#[tokio::test]
async fn events_arrive_while_the_upstream_is_still_open() {
    let config = Config::default()
        .with_tags(["note"])
        .unwrap()
        .with_recovery("note", Strategy::ForwardUntilTag)
        .unwrap();
    let (mut tx, rx) = mpsc::channel::<String>(1);
    let mut events = rx.kindaxml(&config);
    let steps: [(&str, &[&str]); 4] = [
        ("First line.\n", &["First line.\n"]),
        ("<note>Checking", &["Checking"]),
        (" the logs", &[" the logs"]),
        ("</note> done", &[" done"]),
    ];
    for (token, want) in steps {
        tx.send(token.to_string()).await.unwrap();
        for w in want {
            let e = tokio::time::timeout(Duration::from_secs(10), events.next())
                .await
                .expect("event before the upstream ends")
                .unwrap()
                .unwrap();
            match e {
                Event::Text(s) => assert_eq!(s.text(), *w),
                other => panic!("unexpected {other:?}"),
            }
        }
        // Nothing else is ready: the adapter waits for the upstream, it does not block.
        assert!(
            tokio::time::timeout(Duration::from_millis(20), events.next())
                .await
                .is_err()
        );
    }
    drop(tx);
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn dropping_the_stream_midway_is_clean() {
    let (mut tx, rx) = mpsc::channel::<&'static str>(4);
    let mut events = rx.kindaxml(&config());
    tx.send("A line\nand more <cite id=1>").await.unwrap();
    let first = events.next().await.unwrap().unwrap();
    assert!(matches!(first, Event::Text(ref s) if s.text() == "A line\n"));
    drop(events);
    // The upstream sees the receiver gone; nothing panics or hangs.
    assert!(tx.send("x").await.is_err());
}

#[tokio::test]
async fn decoder_over_duplex_with_every_write_split() {
    let config = config();
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/data/answer.txt"
    ))
    .unwrap();
    let sample = &sample[..sample.len().min(400)];
    let want = parse(std::str::from_utf8(sample).unwrap(), &config);
    for k in 0..=sample.len() {
        let (mut w, r) = tokio::io::duplex(64);
        let (a, b) = (sample[..k].to_vec(), sample[k..].to_vec());
        let writer = tokio::spawn(async move {
            w.write_all(&a).await.unwrap();
            w.flush().await.unwrap();
            tokio::task::yield_now().await;
            w.write_all(&b).await.unwrap();
            w.shutdown().await.unwrap();
        });
        let mut framed = FramedRead::new(r, KindaxmlDecoder::new(&config));
        let mut doc = Document::new();
        while let Some(e) = framed.next().await {
            doc.push(e.unwrap());
        }
        writer.await.unwrap();
        assert_eq!(doc, want, "split at {k}");
    }
}

#[tokio::test]
async fn decoder_reports_invalid_utf8_after_the_text_before_it() {
    let (mut w, r) = tokio::io::duplex(64);
    tokio::spawn(async move {
        w.write_all(b"fine text\xff more").await.unwrap();
        w.shutdown().await.unwrap();
    });
    let mut framed = FramedRead::new(r, KindaxmlDecoder::new(&config()));
    let mut text = String::new();
    let mut error = None;
    while let Some(e) = framed.next().await {
        match e {
            Ok(Event::Text(s)) => text.push_str(s.text()),
            Ok(Event::Marker(_)) => {}
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    assert_eq!(text, "fine text");
    assert!(
        matches!(
            error,
            Some(DecodeError::Parse(Error::InvalidUtf8 { offset: 9 }))
        ),
        "{error:?}"
    );
}

#[test]
fn public_async_types_are_send_sync_unpin() {
    fn send_unpin<T: Send + Unpin>() {}
    fn send_sync_unpin<T: Send + Sync + Unpin>() {}
    send_unpin::<ParseStream<stream::Iter<std::vec::IntoIter<String>>, std::convert::Infallible>>();
    send_unpin::<ParseStream<mpsc::Receiver<Bytes>, std::convert::Infallible>>();
    send_sync_unpin::<KindaxmlDecoder>();
    send_sync_unpin::<DecodeError>();
    send_sync_unpin::<StreamError<std::io::Error>>();
    // A !Unpin upstream makes the adapter !Unpin but it still works when pinned.
    let s = stream::iter(["a ", "<cite id=1>"]).then(|t| async move { t });
    let events: Vec<_> = futures::executor::block_on(Box::pin(s.kindaxml(&config())).collect());
    assert_eq!(collect_doc(events), parse("a <cite id=1>", &config()));
}

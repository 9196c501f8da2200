//! The `kxml` binary (SPEC §10): formats, exit codes and messages, chunking, liveness.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const KXML: &str = env!("CARGO_BIN_EXE_kxml");

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data")
        .join(name)
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn kxml(args: &[&str], stdin: &[u8]) -> Out {
    kxml_env(args, stdin, &[])
}

fn kxml_env(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Out {
    let mut child = Command::new(KXML)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kxml");
    let mut input = child.stdin.take().unwrap();
    let owned = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&owned);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

const INPUT: &str = "We shipped last week <cite id=1>. Start <todo id=3/> end";

#[test]
fn document_format() {
    let o = kxml(&["--tags", "cite,todo"], INPUT.as_bytes());
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        o.stdout,
        concat!(
            r#"{"text":"We shipped last week . Start  end","segments":[{"text":"We shipped last week","ann":[{"tag":"cite","attrs":{"id":"1"}}]},{"text":" . Start  end","ann":[]}],"markers":[{"pos":29,"tag":"todo","attrs":{"id":"3"}}]}"#,
            "\n"
        )
    );
}

#[test]
fn jsonl_text_and_count_formats() {
    // From a file, the input arrives in one read: one update, then finish. The update emits
    // up to "Start", which a later postfix cite on the line could still claim.
    let file = std::env::temp_dir().join(format!("kxml-jsonl-{}.txt", std::process::id()));
    std::fs::write(&file, INPUT).unwrap();
    let o = kxml(
        &[
            "--tags",
            "cite,todo",
            "--format",
            "jsonl",
            file.to_str().unwrap(),
        ],
        b"",
    );
    std::fs::remove_file(&file).ok();
    assert_eq!(o.code, 0);
    assert_eq!(
        o.stdout.lines().collect::<Vec<_>>(),
        [
            r#"{"type":"text","text":"We shipped last week","ann":[{"tag":"cite","attrs":{"id":"1"}}]}"#,
            r#"{"type":"text","text":" . ","ann":[]}"#,
            r#"{"type":"text","text":"Start ","ann":[]}"#,
            r#"{"type":"marker","pos":29,"tag":"todo","attrs":{"id":"3"}}"#,
            r#"{"type":"text","text":" end","ann":[]}"#,
        ]
    );
    let o = kxml(
        &["--tags", "cite,todo", "--format", "text"],
        INPUT.as_bytes(),
    );
    assert_eq!(o.stdout, "We shipped last week . Start  end");
    let o = kxml(&["--tags=cite,todo", "--format=count"], INPUT.as_bytes());
    assert_eq!(INPUT.len(), 56);
    assert_eq!(
        o.stdout,
        "{\"bytes\":56,\"text_bytes\":33,\"segments\":2,\"markers\":1}\n"
    );
}

#[test]
fn compat_and_config_file() {
    // kindaxml's defaults: unknown tags stripped, retro_line.
    let o = kxml(
        &["--compat", "--tags", "cite", "--format", "text"],
        b"A <b>bold</b> claim <cite id=1>.",
    );
    assert_eq!(o.stdout, "A bold claim .");
    let o = kxml(
        &["--tags", "cite", "--format", "text"],
        b"A <b>bold</b> claim <cite id=1>.",
    );
    assert_eq!(o.stdout, "A <b>bold</b> claim .");
    let cfg = data("answer.json");
    let o = kxml(
        &["--config", cfg.to_str().unwrap(), "--format", "count"],
        b"<note>x</note> <todo/>",
    );
    assert_eq!(
        o.stdout,
        "{\"bytes\":22,\"text_bytes\":2,\"segments\":2,\"markers\":1}\n"
    );
}

#[test]
fn errors_and_exit_codes() {
    let dir = std::env::temp_dir().join(format!("kxml-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"recognized_tags":["cite"],"recovery":{"cite":"retro_line"}}"#,
    )
    .unwrap();
    let o = kxml(&["--config", bad.to_str().unwrap()], b"x");
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("unknown field `recovery`"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty());

    std::fs::write(&bad, r#"{"per_tag_recovery":{"cite":"retro_lines"}}"#).unwrap();
    let o = kxml(&["--config", bad.to_str().unwrap()], b"x");
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("per_tag_recovery.cite") && o.stderr.contains("retro_lines"),
        "{}",
        o.stderr
    );

    let o = kxml(&[], b"fine text\nthen \xff bad");
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("invalid UTF-8 at input byte offset 15"),
        "{}",
        o.stderr
    );

    let missing = dir.join("missing.txt");
    let o = kxml(&[missing.to_str().unwrap()], b"");
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("missing.txt") && o.stderr.contains("cannot open"),
        "{}",
        o.stderr
    );

    for args in [
        &["--format", "xml"][..],
        &["--chunk-size", "0"],
        &["--threads", "0"],
        &["--threads", "two"],
        &["--bogus"],
        &["a", "b"],
        &["--tags", "9x"],
    ] {
        let o = kxml(args, b"x");
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.starts_with("kxml: "), "{args:?}: {}", o.stderr);
    }
    let o = kxml(&["--lossy", "--format", "text"], b"a\xffb");
    assert_eq!((o.code, o.stdout.as_str()), (0, "a\u{FFFD}b"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn chunk_size_one_equals_whole_input() {
    let cfg = data("answer.json");
    let sample = data("answer.txt");
    for format in ["document", "jsonl", "text", "count"] {
        let whole = kxml(
            &[
                "--config",
                cfg.to_str().unwrap(),
                "--format",
                format,
                sample.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(whole.code, 0, "{}", whole.stderr);
        for n in ["1", "2", "7", "64"] {
            let chunked = kxml(
                &[
                    "--config",
                    cfg.to_str().unwrap(),
                    "--format",
                    format,
                    "--chunk-size",
                    n,
                    sample.to_str().unwrap(),
                ],
                b"",
            );
            assert_eq!(chunked.code, 0);
            if format == "jsonl" {
                // Event boundaries may differ; the merged document may not.
                let merge = |s: &str| -> (String, Vec<String>) {
                    let mut text = String::new();
                    let mut markers = Vec::new();
                    for l in s.lines() {
                        let v: serde_json::Value = serde_json::from_str(l).unwrap();
                        match v["type"].as_str().unwrap() {
                            "text" => text.push_str(v["text"].as_str().unwrap()),
                            _ => markers.push(l.to_string()),
                        }
                    }
                    (text, markers)
                };
                assert_eq!(
                    merge(&chunked.stdout),
                    merge(&whole.stdout),
                    "jsonl chunk {n}"
                );
            } else {
                assert_eq!(chunked.stdout, whole.stdout, "{format} chunk {n}");
            }
        }
    }
    // Stdin in 1-byte chunks, splitting UTF-8 characters.
    let text = "日本 <cite id=1>. ünï <cite id=2>.";
    let a = kxml(&["--tags", "cite"], text.as_bytes());
    let b = kxml(&["--tags", "cite", "--chunk-size", "1"], text.as_bytes());
    assert_eq!(a.stdout, b.stdout);
}

/// `producer | kxml --format jsonl` is live: a final event is printed while the producer is
/// still writing.
#[test]
fn jsonl_is_live() {
    let mut child = Command::new(KXML)
        .args(["--tags", "note", "--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    stdin
        .write_all(b"First line of the answer\nsecond <no")
        .unwrap();
    stdin.flush().unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("an event before the input ends");
    assert_eq!(
        first,
        r#"{"type":"text","text":"First line of the answer\n","ann":[]}"#
    );
    stdin.write_all(b"te>x</note>").unwrap();
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(
        rest,
        [
            r#"{"type":"text","text":"second ","ann":[]}"#,
            r#"{"type":"text","text":"x","ann":[{"tag":"note","attrs":{}}]}"#
        ]
    );
    assert!(child.wait().unwrap().success());
}

/// `kxml … | head -c 10`: a closed stdout ends kxml quietly.
#[test]
fn closed_stdout_is_quiet() {
    let mut child = Command::new(KXML)
        .args(["--format", "text", "--chunk-size", "1000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = "plain text without tags. ".repeat(4000);
        for _ in 0..400 {
            if stdin.write_all(block.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut ten = [0u8; 10];
    stdout.read_exact(&mut ten).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
}

/// Binary garbage: a clear error naming the offset (strict), or U+FFFD (lossy) — never a
/// panic, whatever the bytes.
#[test]
fn binary_garbage() {
    let mut seed: u64 = 42;
    let garbage: Vec<u8> = (0..200_000)
        .map(|_| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 56) as u8
        })
        .collect();
    let first_bad = std::str::from_utf8(&garbage).unwrap_err().valid_up_to();
    let o = kxml(&["--tags", "cite,note"], &garbage);
    assert_eq!(o.code, 1);
    assert_eq!(
        o.stderr,
        format!("kxml: invalid UTF-8 at input byte offset {first_bad}\n")
    );
    for format in ["document", "jsonl", "text", "count"] {
        let o = kxml(
            &[
                "--tags",
                "cite,note",
                "--lossy",
                "--format",
                format,
                "--chunk-size",
                "7",
            ],
            &garbage,
        );
        assert_eq!(o.code, 0, "{format}: {}", o.stderr);
        assert!(o.stderr.is_empty());
    }
    let o = kxml(&["--lossy", "--format", "text"], &garbage);
    assert_eq!(o.stdout, String::from_utf8_lossy(&garbage));
}

#[path = "../benches/corpus.rs"]
mod corpus;

use corpus::Shape;

/// `--format count` of `path` on `threads` threads (more `args` first), with the parts'
/// trace (`KXML_TRACE_PARTS`) on stderr.
fn count_traced(args: &[&str], threads: &str, path: &str) -> Out {
    let mut a = args.to_vec();
    a.extend(["--format", "count", "--threads", threads, path]);
    kxml_env(&a, b"", &[("KXML_TRACE_PARTS", "1")])
}

/// From a count's trace: the number of parts, and per later part whether it joined and
/// whether that was after its first point (`joined at P` with `P` past its start).
fn parts_of(trace: &str) -> (usize, Vec<(bool, bool)>) {
    let mut n = 0;
    let mut parts = Vec::new();
    for line in trace.lines() {
        if let Some(rest) = line.strip_prefix("kxml: count in ") {
            n = rest.trim_end_matches(" parts").parse().unwrap();
        } else if let Some(rest) = line.strip_prefix("kxml: part ") {
            let (range, how) = rest.split_once(": ").unwrap();
            let start: u64 = range.split_once("..").unwrap().0.parse().unwrap();
            match how.strip_prefix("joined at ") {
                Some(at) => parts.push((true, at.parse::<u64>().unwrap() > start)),
                None => parts.push((false, false)),
            }
        }
    }
    assert!(!trace.contains("failed"), "{trace}");
    (n, parts)
}

/// What `--format count` must print for `input`, from `parse()` of the whole.
fn count_line(input: &str, config: &kindaxml_stream::Config) -> String {
    let doc = kindaxml_stream::parse(input, config);
    format!(
        "{{\"bytes\":{},\"text_bytes\":{},\"segments\":{},\"markers\":{}}}\n",
        input.len(),
        doc.text().len(),
        doc.segments().len(),
        doc.markers().len()
    )
}

/// `--format count` of a file runs its parts on threads and joins them where the parser is
/// restartable, else reads on (DESIGN.md, decision 71): the same line for every thread
/// count, and the one `parse()` gives. The shapes cover joins at the first point (prose,
/// plain), later ones, and none at all (`unicode`: a postfix cite is always open; the
/// hostile shapes have no newline to cut at).
#[test]
fn count_of_a_file_is_the_same_on_any_number_of_threads() {
    let config = kindaxml_stream::Config::default()
        .with_tags(["cite", "note", "todo"])
        .unwrap();
    let dir = std::env::temp_dir().join(format!("kxml-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for shape in corpus::Shape::ALL {
        // 8 parts of at least 64 KiB (`MIN_PART`) with `--threads 8`.
        let input = corpus::corpus(shape, 600 << 10, 3);
        let want = count_line(&input, &config);
        let file = dir.join(format!("{}.txt", shape.name()));
        std::fs::write(&file, &input).unwrap();
        let path = file.to_str().unwrap();
        for threads in ["1", "2", "3", "8"] {
            let o = count_traced(&["--tags", "cite,note,todo"], threads, path);
            assert_eq!(o.code, 0, "{}: {}", shape.name(), o.stderr);
            assert_eq!(o.stdout, want, "{} on {threads} threads", shape.name());
            // How the parts went: the parallel path ran, and joined where it could.
            let (n, parts) = parts_of(&o.stderr);
            let joined = parts.iter().filter(|p| p.0).count();
            let what = format!("{} on {threads} threads: {}", shape.name(), o.stderr);
            match (threads, shape) {
                ("1", _) => assert_eq!(n, 0, "{what}"),
                (_, Shape::Prose | Shape::Dense) => {
                    // Up to 4 parts per thread, of at least 64 KiB.
                    assert!(n >= threads.parse::<usize>().unwrap(), "{what}");
                    assert!(joined > 0, "{what}");
                }
                (_, Shape::Plain) => assert_eq!(joined, n - 1, "{what}"),
                (_, Shape::Unicode) => assert_eq!(joined, 0, "{what}"),
                // No newline to cut at: one part.
                _ if shape.is_hostile() && shape != Shape::DeepNest => assert_eq!(n, 1, "{what}"),
                _ => {}
            }
        }
    }
    // 8 parts of 640 KiB on 2 threads: past the checkpoints after which a part restartable
    // at none of them stops (8 of 64 KiB), so non-Latin parts stop early and join nowhere.
    for shape in [corpus::Shape::Unicode, corpus::Shape::Prose] {
        let input = corpus::corpus(shape, 5 << 20, 5);
        let file = dir.join("long.txt");
        std::fs::write(&file, &input).unwrap();
        let o = count_traced(&["--tags", "cite,note,todo"], "2", file.to_str().unwrap());
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(
            o.stdout,
            count_line(&input, &config),
            "{} 5 MiB",
            shape.name()
        );
        let stopped = o.stderr.contains("stopped early");
        assert_eq!(stopped, shape == Shape::Unicode, "{}", o.stderr);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Parts that meet inside constructs (an open note, a fence, raw content, a tag candidate
/// spanning a newline, a postfix cite, CDATA), closed in a later part or never: the count
/// does not depend on where the parts meet.
#[test]
fn count_on_threads_across_open_constructs() {
    let config = kindaxml_stream::Config::default()
        .with_raw_tags(["think"])
        .unwrap()
        .with_tags(["cite", "note", "todo"])
        .unwrap();
    let dir = std::env::temp_dir().join(format!("kxml-threads-open-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("think.json");
    std::fs::write(&json, r#"{"raw_tags":["think"]}"#).unwrap();
    let line = "Plain words for a line of prose, long enough to fill a part quickly.\n";
    let fill = line.repeat((70 << 10) / line.len());
    let half = line.repeat((35 << 10) / line.len());
    // Each construct opens in part 1, and is closed in the middle of part 3 or never.
    let constructs = [
        ("<note>An open note", "</note>"),
        ("```\nA fence", "```\n"),
        ("<think>Raw content", "</think>"),
        ("Shipped <cite id=1", "\n"),
        ("Postfix <cite id=2>.", "<cite id=3>x</cite>"),
        ("<![CDATA[cdata", "]]>"),
    ];
    // (joined at a part's start, joined at a later point, read through) over all runs.
    let mut seen = (0, 0, 0);
    for (i, (open, close)) in constructs.iter().enumerate() {
        for close in ["", close] {
            let input = format!("{fill}{open}\n{fill}{fill}{half}{close}\n{half}{fill}<todo/>end");
            let want = count_line(&input, &config);
            let file = dir.join(format!("open{i}.txt"));
            std::fs::write(&file, &input).unwrap();
            let args = [
                "--config",
                json.to_str().unwrap(),
                "--tags",
                "cite,note,todo",
            ];
            for threads in ["1", "2", "4"] {
                let o = count_traced(&args, threads, file.to_str().unwrap());
                assert_eq!(o.code, 0, "{open:?}: {}", o.stderr);
                assert_eq!(
                    o.stdout, want,
                    "{open:?} closed by {close:?}, {threads} threads"
                );
                for (joined, later) in parts_of(&o.stderr).1 {
                    match (joined, later) {
                        (true, false) => seen.0 += 1,
                        (true, true) => seen.1 += 1,
                        _ => seen.2 += 1,
                    }
                }
            }
        }
    }
    // Every way of joining came up.
    assert!(seen.0 > 0 && seen.1 > 0 && seen.2 > 0, "{seen:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An error in a later part is reported as the sequential run reports it: the same
/// message (its offset counted from the start of the file) and exit status 1; `--lossy`
/// counts the same on any number of threads.
#[test]
fn count_on_threads_reports_invalid_utf8_at_its_file_offset() {
    let dir = std::env::temp_dir().join(format!("kxml-threads-err-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let line = b"Plain words for a line of prose <cite id=1>, long enough to fill a part.\n";
    let mut input = line.repeat((300 << 10) / line.len());
    let bad = input.len() - 5000;
    input[bad] = 0xFF;
    let file = dir.join("bad.txt");
    std::fs::write(&file, &input).unwrap();
    let path = file.to_str().unwrap();
    let want = format!("kxml: invalid UTF-8 at input byte offset {bad}\n");
    for threads in ["1", "2", "4"] {
        let o = kxml(&["--format", "count", "--threads", threads, path], b"");
        assert_eq!(o.code, 1, "{threads} threads");
        assert_eq!(o.stdout, "", "{threads} threads");
        assert_eq!(o.stderr, want, "{threads} threads");
    }
    let lossy = String::from_utf8_lossy(&input).into_owned();
    let config = kindaxml_stream::Config::default();
    let mut want = count_line(&lossy, &config);
    // `bytes` counts the input read, not the decoded text.
    want = want.replacen(
        &format!("\"bytes\":{}", lossy.len()),
        &format!("\"bytes\":{}", input.len()),
        1,
    );
    for threads in ["1", "2", "4"] {
        let o = kxml(
            &["--format", "count", "--lossy", "--threads", threads, path],
            b"",
        );
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert_eq!(o.stdout, want, "lossy, {threads} threads");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

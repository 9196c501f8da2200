//! `kxml`: streams stdin or a file through the KindaXML parser (SPEC §10).
//!
//! ```text
//! kxml [--config FILE.json] [--tags cite,note] [--compat] [--chunk-size N]
//!      [--format document|jsonl|text|count] [--lossy] [--threads N] [FILE|-]
//! ```
//!
//! Exit status: 0 ok, 2 usage or configuration error, 1 I/O error or invalid UTF-8.

mod alloc;
mod count;

/// Small blocks from per-thread lists (DESIGN.md, decision 107): measured with glibc's
/// allocator, whose thread cache is what it makes up for.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOC: alloc::Cached = alloc::Cached;

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::process::ExitCode;

use count::Tally;
use kindaxml_stream::{Config, Document, Error, Event, StreamParser};

const USAGE: &str = "\
usage: kxml [--config FILE.json] [--tags cite,note] [--compat] [--chunk-size N]
            [--format document|jsonl|text|count] [--lossy] [--threads N] [FILE|-]

Parses KindaXML-annotated text (LLM output) from FILE or stdin as it arrives.

  --config FILE    JSON configuration (kindaxml field names, plus preset, default_recovery,
                   decode_entities, duplicate_attrs, max_tag_bytes, max_span_bytes)
  --tags LIST      recognized tags, comma-separated (replaces recognized_tags)
  --compat         start from kindaxml 0.1.0's defaults instead of this crate's
  --chunk-size N   feed N bytes at a time (splits may fall inside UTF-8 characters)
  --format F       document (default): one line of JSON, the canonical document
                   jsonl: one JSON line per event, printed as soon as it is final
                   text: the output text only, as it becomes final
                   count: {\"bytes\":N,\"text_bytes\":N,\"segments\":N,\"markers\":N}
  --lossy          replace invalid UTF-8 with U+FFFD instead of failing
  --threads N      threads for `--format count` of a file (default: the cores available;
                   the result is the same for every N)
  -h, --help       this help
  -V, --version    version

exit status: 0 ok, 2 usage or configuration error, 1 I/O error or invalid UTF-8";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Document,
    Jsonl,
    Text,
    Count,
}

struct Args {
    config: Option<String>,
    tags: Option<String>,
    compat: bool,
    chunk_size: Option<usize>,
    format: Format,
    lossy: bool,
    threads: Option<usize>,
    input: Option<String>,
}

enum Fail {
    Usage(String),
    Io(String),
    /// stdout closed: stop quietly.
    Pipe,
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Fail {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Fail::Pipe
        } else {
            Fail::Io(format!("write error: {e}"))
        }
    }
}

fn parse_args() -> Result<Option<Args>, Fail> {
    let mut a = Args {
        config: None,
        tags: None,
        compat: false,
        chunk_size: None,
        format: Format::Document,
        lossy: false,
        threads: None,
        input: None,
    };
    let mut it = std::env::args().skip(1);
    let mut only_files = false;
    while let Some(arg) = it.next() {
        if only_files || arg == "-" || !arg.starts_with('-') {
            if a.input.replace(arg.clone()).is_some() {
                return Err(Fail::Usage(format!(
                    "unexpected argument `{arg}` (one input at most)"
                )));
            }
            continue;
        }
        if arg == "--" {
            only_files = true;
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| -> Result<String, Fail> {
            match inline.clone().or_else(|| it.next()) {
                Some(v) => Ok(v),
                None => Err(Fail::Usage(format!("{name} needs a value"))),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(None);
            }
            "-V" | "--version" => {
                println!("kxml {}", env!("CARGO_PKG_VERSION"));
                return Ok(None);
            }
            "--config" => a.config = Some(value("--config")?),
            "--tags" => a.tags = Some(value("--tags")?),
            "--compat" => a.compat = true,
            "--lossy" => a.lossy = true,
            "--chunk-size" => {
                a.chunk_size = Some(positive("--chunk-size", value("--chunk-size")?)?)
            }
            "--threads" => a.threads = Some(positive("--threads", value("--threads")?)?),
            "--format" => {
                let v = value("--format")?;
                a.format = match v.as_str() {
                    "document" => Format::Document,
                    "jsonl" => Format::Jsonl,
                    "text" => Format::Text,
                    "count" => Format::Count,
                    _ => {
                        return Err(Fail::Usage(format!(
                        "--format: unknown format `{v}` (expected document, jsonl, text or count)"
                    )))
                    }
                };
            }
            _ => return Err(Fail::Usage(format!("unknown option `{arg}`"))),
        }
    }
    Ok(Some(a))
}

/// The value of `flag`, a positive integer.
fn positive(flag: &str, v: String) -> Result<usize, Fail> {
    match v.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Fail::Usage(format!(
            "{flag}: expected a positive integer, got `{v}`"
        ))),
    }
}

fn load_config(a: &Args) -> Result<Config, Fail> {
    let mut config = match &a.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Fail::Usage(format!("cannot read config `{path}`: {e}")))?;
            let mut v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| Fail::Usage(format!("config `{path}`: invalid JSON: {e}")))?;
            if a.compat {
                // --compat chooses the base preset.
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("preset".into(), "kindaxml_compat".into());
                }
            }
            Config::from_json_value(&v).map_err(|e| Fail::Usage(format!("config `{path}`: {e}")))?
        }
        None if a.compat => Config::kindaxml_compat(),
        None => Config::default(),
    };
    if let Some(tags) = &a.tags {
        let list: Vec<&str> = tags
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        config = config
            .with_tags(list)
            .map_err(|e| Fail::Usage(format!("--tags: {e}")))?;
    }
    Ok(config)
}

/// Where events go.
struct Sink<W: Write> {
    out: W,
    format: Format,
    doc: Document,
    tally: Tally,
}

impl<W: Write> Sink<W> {
    fn event(&mut self, e: Event) -> io::Result<()> {
        match self.format {
            Format::Document => self.doc.push(e),
            Format::Jsonl => {
                serde_json::to_writer(&mut self.out, &e)?;
                self.out.write_all(b"\n")?;
            }
            Format::Text => {
                if let Event::Text(s) = &e {
                    self.out.write_all(s.text().as_bytes())?;
                }
            }
            Format::Count => self.tally.event(&e),
        }
        Ok(())
    }

    /// After each update: what is final is on its way out.
    fn flush(&mut self) -> io::Result<()> {
        if matches!(self.format, Format::Jsonl | Format::Text) {
            self.out.flush()?;
        }
        Ok(())
    }

    fn end(&mut self, bytes: u64) -> io::Result<()> {
        match self.format {
            Format::Document => {
                serde_json::to_writer(&mut self.out, &self.doc)?;
                self.out.write_all(b"\n")?;
            }
            Format::Count => {
                let t = &self.tally;
                writeln!(
                    self.out,
                    "{{\"bytes\":{bytes},\"text_bytes\":{},\"segments\":{},\"markers\":{}}}",
                    t.text_bytes, t.segments, t.markers
                )?;
            }
            Format::Jsonl | Format::Text => {}
        }
        self.out.flush()
    }
}

/// `--format count` of a file on several threads (`count::count_file`), when it applies:
/// the file's length, with `sink.tally` set; `None` to count sequentially.
fn parallel_count<W: Write>(args: &Args, config: &Config, sink: &mut Sink<W>) -> Option<u64> {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let path = args.input.as_deref().filter(|p| *p != "-")?;
    if args.format != Format::Count || args.chunk_size.is_some() || threads < 2 {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let len = meta.len();
    if !meta.is_file() || len < 2 * count::MIN_PART {
        return None;
    }
    // A diagnostic: where the parts joined, on stderr (the tests read it).
    let trace = std::env::var_os("KXML_TRACE_PARTS").is_some();
    let compiled = config.compile();
    sink.tally = count::count_file(path, len, &compiled, args.lossy, threads, trace)?;
    Some(len)
}

fn io_fail(e: Error) -> Fail {
    Fail::Io(e.to_string())
}

fn run() -> Result<(), Fail> {
    let Some(args) = parse_args()? else {
        return Ok(());
    };
    let config = load_config(&args)?;
    let mut input: Box<dyn Read> = match args.input.as_deref() {
        None | Some("-") => Box::new(io::stdin().lock()),
        Some(path) => {
            Box::new(File::open(path).map_err(|e| Fail::Io(format!("cannot open `{path}`: {e}")))?)
        }
    };
    let mut parser = StreamParser::new(&config).with_lossy_utf8(args.lossy);
    let stdout = io::stdout().lock();
    let mut sink = Sink {
        out: BufWriter::with_capacity(64 * 1024, stdout),
        format: args.format,
        doc: Document::new(),
        tally: Tally::default(),
    };
    if let Some(bytes) = parallel_count(&args, &config, &mut sink) {
        return Ok(sink.end(bytes)?);
    }
    let feed = args.chunk_size.unwrap_or(64 * 1024);
    let mut buf = vec![0u8; feed.clamp(4096, 64 * 1024)];
    let mut total: u64 = 0;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let name = args.input.as_deref().unwrap_or("stdin");
                return Err(Fail::Io(format!("read error on `{name}`: {e}")));
            }
        };
        total += n as u64;
        for piece in buf[..n].chunks(feed) {
            for e in parser.update_bytes(piece).map_err(io_fail)? {
                sink.event(e)?;
            }
        }
        sink.flush()?;
    }
    for e in parser.finish().map_err(io_fail)? {
        sink.event(e)?;
    }
    sink.end(total)?;
    Ok(())
}

fn main() -> ExitCode {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    alloc::keep_heap_top();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(Fail::Pipe) => ExitCode::SUCCESS,
        Err(Fail::Usage(m)) => {
            eprintln!("kxml: {m}");
            if m.starts_with("unknown option") || m.starts_with("unexpected argument") {
                eprintln!("{USAGE}");
            }
            ExitCode::from(2)
        }
        Err(Fail::Io(m)) => {
            eprintln!("kxml: {m}");
            ExitCode::from(1)
        }
    }
}

#!/usr/bin/env bash
# Measurements criterion cannot sample, written to target/bench-extra.jsonl for
# bench_table.py: kindaxml 0.1.0 at 10 MB (quadratic: seconds per run), whole-process
# `kxml --format count` against a quick-xml program counting events in the same shape of file,
# and whole processes parsing a prose file next to kindaxml and the floor of reading it.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --features cli --bin kxml --example gen_corpus --example quickxml_count --example vs_kindaxml \
  --example whole_process
out=target/bench-extra.jsonl
: > "$out"
for spec in "prose 1M" "prose 10M" "dense 1M"; do
  line=$(RUNS=5 ./target/release/examples/vs_kindaxml $spec)
  echo "$line"
  echo "{\"kind\":\"vs_kindaxml\",\"line\":\"$line\"}" >> "$out"
done
dir=$(mktemp -d)
# (The 100 MB inputs are removed on any exit, not only on success.)
trap 'rm -rf "$dir"' EXIT
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
list() { printf '%s' "$1" | paste -sd, -; }
# Prose (the target's shape) and non-Latin text (where UTF-8 validation weighs most). `kxml`
# counts a file on every core by default (DESIGN.md, decision 71), and on one with
# `--threads 1`; the three programs take turns, 15 rounds (7 before DESIGN.md decision 79), so
# that a burst of load from another tenant of this shared machine slows one round of each
# rather than all of one program's. Every round is recorded.
threads=$(nproc)
for shape in prose unicode; do
  ./target/release/examples/gen_corpus $shape 100M > "$dir/in.txt"
  ./target/release/examples/gen_corpus ${shape}_well_formed 100M > "$dir/in.xml"
  kt=""; k1t=""; qt=""; krss=0; k1rss=0; qrss=0
  for _ in $(seq 15); do
    for prog in k k1 q; do
      case $prog in
        k) cmd=(./target/release/kxml --tags cite,note,todo --format count "$dir/in.txt") ;;
        k1) cmd=(./target/release/kxml --tags cite,note,todo --format count --threads 1 "$dir/in.txt") ;;
        q) cmd=(./target/release/examples/quickxml_count "$dir/in.xml") ;;
      esac
      # Wall time in ms from the shell's clock (`time`'s %e has 10 ms steps), RSS from `time`.
      t0=$(date +%s%N)
      m=$( { /usr/bin/time -f '%M' "${cmd[@]}" >/dev/null; } 2>&1 | tail -n 1)
      t=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.3f", (b - a) / 1e9}')
      case $prog in
        k) kt+="$t"$'\n'; krss=$(( m > krss ? m : krss )) ;;
        k1) k1t+="$t"$'\n'; k1rss=$(( m > k1rss ? m : k1rss )) ;;
        q) qt+="$t"$'\n'; qrss=$(( m > qrss ? m : qrss )) ;;
      esac
    done
  done
  # Every round, in order, for the table.
  krounds=$(list "$kt"); k1rounds=$(list "$k1t"); qrounds=$(list "$qt")
  kt=$(printf '%s' "$kt" | median); k1t=$(printf '%s' "$k1t" | median); qt=$(printf '%s' "$qt" | median)
  kb=$(stat -c %s "$dir/in.txt"); qb=$(stat -c %s "$dir/in.xml")
  echo "$shape: kxml count: ${kt}s (${krss} KB) on $threads threads, ${k1t}s (${k1rss} KB) on 1; quick-xml count: ${qt}s (${qrss} KB)"
  echo "{\"kind\":\"whole_process\",\"shape\":\"$shape\",\"threads\":$threads,\"kxml_s\":$kt,\"kxml_rss_kb\":$krss,\"kxml1_s\":$k1t,\"kxml1_rss_kb\":$k1rss,\"kxml_bytes\":$kb,\"qx_s\":$qt,\"qx_rss_kb\":$qrss,\"qx_bytes\":$qb,\"kxml_rounds\":[$krounds],\"kxml1_rounds\":[$k1rounds],\"qx_rounds\":[$qrounds]}" >> "$out"
done
# The issue's own frame: whole processes that read a file of prose and print only counts
# (`examples/whole_process.rs`), at 1 and 10 MB: kindaxml 0.1.0's `parse`, our `parse()` on
# one thread, and the floor any program in this frame pays, reading the file (as a `String`:
# UTF-8 checked) and finding every `<` with memchr. kindaxml's time over the floor's is about
# the most any parser of the file can reach here (DESIGN.md, decision 111). The three take
# turns, 15 rounds at 1 MB and 5 at 10 MB (where one kindaxml run takes seconds); medians and
# every round.
# The clock in microseconds: bash 5's own (reading it forks nothing, where a `date` process
# would add about a millisecond at 1 MB; its decimal point follows the locale), else `date`.
# Sets NOW (no command substitution: that would fork too).
now_us() {
  if [ -n "${EPOCHREALTIME:-}" ]; then NOW=${EPOCHREALTIME/[.,]/}; else NOW=$(( $(date +%s%N) / 1000 )); fi
}
rm -f "$dir"/in.*
for size in 1M 10M; do
  ./target/release/examples/gen_corpus prose $size > "$dir/frame.txt"
  rounds=15; if [ "$size" = 10M ]; then rounds=5; fi
  ft=""; ot=""; xt=""
  for _ in $(seq $rounds); do
    for mode in memchr ours kindaxml; do
      now_us; t0=$NOW
      MODE=$mode ./target/release/examples/whole_process "$dir/frame.txt" > /dev/null
      now_us; us=$(( NOW - t0 ))
      t=$(printf '%d.%06d' $(( us / 1000000 )) $(( us % 1000000 )))
      case $mode in memchr) ft+="$t"$'\n' ;; ours) ot+="$t"$'\n' ;; kindaxml) xt+="$t"$'\n' ;; esac
    done
  done
  fr=$(list "$ft"); or=$(list "$ot"); xr=$(list "$xt")
  fm=$(printf '%s' "$ft" | median); om=$(printf '%s' "$ot" | median); xm=$(printf '%s' "$xt" | median)
  bytes=$(stat -c %s "$dir/frame.txt")
  echo "whole process, prose $size: floor ${fm}s, parse ${om}s, kindaxml ${xm}s"
  echo "{\"kind\":\"whole_frame\",\"shape\":\"prose\",\"bytes\":$bytes,\"floor_s\":$fm,\"ours_s\":$om,\"kindaxml_s\":$xm,\"floor_rounds\":[$fr],\"ours_rounds\":[$or],\"kindaxml_rounds\":[$xr]}" >> "$out"
done

# Scaling in instructions (callgrind counts instructions, not seconds: repeatable whatever
# else the machine does), 512 KiB against 2 MiB, the configuration of the scaling benches.
cargo build --release --quiet --example profile_parse
# `profile_parse ARGS` under callgrind -> the instructions it ran (the environment passes through).
profile_instr() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null ./target/release/examples/profile_parse "$@" 2>&1 |
    awk '/Collected/ {gsub(",", "", $4); print $4}'
}
for shape in lt_flood open_quote one_line amp_flood deep_nest; do
  for chunk in 0 1; do
    counts=""
    for size in 524288 2097152; do
      n=$(PRESET=scaling profile_instr $shape $size 1 $chunk)
      counts="$counts $n"
    done
    set -- $counts
    echo "{\"kind\":\"instr_scaling\",\"shape\":\"$shape\",\"chunk\":$chunk,\"x1\":$1,\"x4\":$2}" >> "$out"
    echo "$shape chunk=$chunk: $1 -> $2 instructions"
  done
done

# Rounds of two `profile_parse` runs back to back, each after one untimed run (WARMUP):
# prints EXPR of their throughputs `a` and `b` for each of 15 rounds. 15 short rounds rather
# than a few long ones: a burst of load from another tenant of this shared machine then
# skews fewer of them. (PRESET passes through the environment.)
# `ENGINE_A` / `ENGINE_B` pick what each side runs (`profile_parse`'s ENGINE; ours by default).
rounds() { # EXPR "ARGS A" "ARGS B"
  local r="" a b
  for _ in $(seq 15); do
    a=$(WARMUP=1 ENGINE="${ENGINE_A:-ours}" ./target/release/examples/profile_parse $2 | awk '{print $(NF-1)}')
    b=$(WARMUP=1 ENGINE="${ENGINE_B:-ours}" ./target/release/examples/profile_parse $3 | awk '{print $(NF-1)}')
    r="$r $(awk -v a="$a" -v b="$b" "BEGIN {printf \"%.3f\", $1}")"
  done
  echo "${r# }"
}

# Scaling in wall time, interleaved: criterion measures 1x, 2x and 4x one after another, so a
# burst of load during one of them skews that ratio. Here each round times 1 MiB and then
# 4 MiB (the same total bytes: 4x the iterations at 1 MiB) back to back, and the median of
# the rounds' ratios is reported. The untimed first run matters here: the 4 MiB side times
# only n/4 runs, so without it the first run's page faults (a heap growing to the input's
# size) weigh 4x as much there: one_line's median was 5.18x without it and 4.06x / 4.28x in
# two runs with it, at an unchanged instruction ratio (3.95x).
for shape in lt_flood open_quote one_line amp_flood deep_nest; do
  for chunk in 0 1; do
    if [ "$chunk" = 0 ]; then n=8; else n=4; fi
    ratios=$(PRESET=scaling rounds "4 * a / b" "$shape 1048576 $n $chunk" "$shape 4194304 $((n / 4)) $chunk")
    med=$(printf '%s\n' $ratios | median)
    echo "{\"kind\":\"wall_scaling\",\"shape\":\"$shape\",\"chunk\":$chunk,\"median\":$med,\"rounds\":\"$ratios\"}" >> "$out"
    echo "$shape chunk=$chunk: 4x input -> ${med}x time (rounds: $ratios)"
  done
done

# Stream ratios in wall time, interleaved: criterion times `parse` and `stream/N` of a group
# one after another, so a burst of load during one of them skews their ratio (in one run
# prose in 4-byte chunks at 1 MB took 6.35 ms against 6.95 ms in 1-byte chunks). Here each
# round times one-shot and then N-byte chunks of the same input back to back (the
# throughput benches' configuration and loop), and the median of the rounds' ratios is
# reported (DESIGN.md, decision 75).
for shape in prose unicode dense one_line; do
  # The sizes of the criterion groups (10 MB for prose only).
  sizes="1024 65536 1048576"
  if [ "$shape" = prose ]; then sizes="$sizes 10485760"; fi
  for size in $sizes; do
    case $size in 1024) n=20000 ;; 65536) n=400 ;; 1048576) n=20 ;; *) n=2 ;; esac
    for chunk in 4 1; do
      ratios=$(rounds "b / a" "$shape $size $n 0" "$shape $size $n $chunk")
      med=$(printf '%s\n' $ratios | median)
      echo "{\"kind\":\"wall_stream\",\"shape\":\"$shape\",\"size\":$size,\"chunk\":$chunk,\"median\":$med,\"rounds\":\"$ratios\"}" >> "$out"
      echo "$shape $size chunk=$chunk: ${med}x one-shot (rounds: $ratios)"
    done
    # The same 4-byte chunks collected into a buffer and parsed once, without streaming
    # (`corpus::collected`): what receiving token-sized chunks costs (DESIGN.md, decision 86).
    ratios=$(ENGINE_B=collect rounds "b / a" "$shape $size $n 0" "$shape $size $n 4")
    med=$(printf '%s\n' $ratios | median)
    echo "{\"kind\":\"wall_collect\",\"shape\":\"$shape\",\"size\":$size,\"chunk\":4,\"median\":$med,\"rounds\":\"$ratios\"}" >> "$out"
    echo "$shape $size collected in 4-byte chunks: ${med}x one-shot (rounds: $ratios)"
  done
done

# Against kindaxml and quick-xml in wall time, interleaved: the targets' other ratios, which
# criterion also times one benchmark after another (in one run our `parse` of the well-formed
# prose took 3.51 ms at 1 MB against 2.43 ms in the run before, at the same instruction count,
# while quick-xml took 1.92 and 1.62 ms). Each round times ours and then theirs on the same
# input (quick-xml and our `parse_wellformed` on the well-formed variant, kindaxml and our
# `parse` on the shape itself), and the median of the rounds' ratios (our throughput over
# theirs) is reported (DESIGN.md, decision 81).
# quick-xml building the same document (`quickxml_doc`, decision 109) is timed the same way.
for spec in "quickxml 1048576 20 20" "quickxml 10485760 2 2" "quickxml_doc 1048576 20 20" \
            "quickxml_doc 10485760 2 2" "kindaxml 1048576 20 2"; do
  set -- $spec
  ours=ours; if [ "$1" != kindaxml ]; then ours=ours_wf; fi
  ratios=$(ENGINE_A=$ours ENGINE_B=$1 rounds "a / b" "prose $2 $3 0" "prose $2 $4 0")
  med=$(printf '%s\n' $ratios | median)
  echo "{\"kind\":\"wall_versus\",\"theirs\":\"$1\",\"shape\":\"prose\",\"size\":$2,\"median\":$med,\"rounds\":\"$ratios\"}" >> "$out"
  echo "prose $2: ours / $1 throughput ${med}x (rounds: $ratios)"
done

# The floor of `parse()`'s time (DESIGN.md, decision 115): the document it returns, built
# from scratch with no parsing (`Document::rebuilt`, `ENGINE=floor`), timed in rounds with
# kindaxml, quick-xml's Reader loop and our `parse` on 1 MiB of prose (quick-xml on the
# well-formed variant), each run after one untimed one. Any parser returning this document
# does at least about the floor's work, so kindaxml's time over the floor's bounds the ratio
# any of them can reach. The floor is read with glibc told to keep the memory it frees: by
# default its heap grows by some 2 MB for the document on every run and is trimmed back when
# the document is dropped, so every run faults those pages in again, an allocator's cost a
# parser need not pay (`parse()`'s own allocations do not make glibc trim). It is also read
# with the defaults (`floor_default`), for comparison. Every run's MB/s is recorded, in the
# order run.
keep_memory=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824
fk=""; ff=""; fd=""; fq=""; fo=""
for _ in $(seq 15); do
  for engine in kindaxml floor floor_default quickxml ours; do
    case $engine in kindaxml) n=5 ;; floor*) n=200 ;; quickxml) n=100 ;; ours) n=60 ;; esac
    r=$(if [ "$engine" = floor ]; then export GLIBC_TUNABLES=$keep_memory; else unset GLIBC_TUNABLES; fi
      WARMUP=1 ENGINE=${engine%_default} ./target/release/examples/profile_parse prose 1048576 $n |
      awk '{print $(NF-1)}')
    case $engine in
      kindaxml) fk+="$r"$'\n' ;; floor) ff+="$r"$'\n' ;; floor_default) fd+="$r"$'\n' ;;
      quickxml) fq+="$r"$'\n' ;; ours) fo+="$r"$'\n' ;;
    esac
  done
done
echo "{\"kind\":\"floor_rounds\",\"shape\":\"prose\",\"size\":1048576,\"tunables\":\"$keep_memory\",\"kindaxml\":[$(list "$fk")],\"floor\":[$(list "$ff")],\"floor_default\":[$(list "$fd")],\"quickxml\":[$(list "$fq")],\"ours\":[$(list "$fo")]}" >> "$out"
echo "floor rounds (MB/s): kindaxml $(list "$fk"); floor $(list "$ff"); with glibc's defaults $(list "$fd"); quickxml $(list "$fq"); ours $(list "$fo")"

# Instructions per byte (callgrind, 1 MiB, the throughput benches' configuration): our
# one-shot parse and 4-/1-byte chunks next to kindaxml, quick-xml and a memchr scan, and
# chunks cut after each `>` and newline (about one update per tag or line: what the updates
# cost without the per-chunk path of token-sized chunks), and 4-byte chunks collected and
# parsed once (the same chunks received without streaming).
# Each count minus the same run with ITERS=0 (input generation only).
instr() { # ENGINE SHAPE ITERS CHUNK -> instruction count
  ENGINE=$1 profile_instr "$2" 1048576 "$3" "$4"
}
for run in "prose ours 0" "prose ours 4" "prose ours 1" "prose ours_stops 0" "prose collect 4" "prose kindaxml 0" \
           "prose ours_wf 0" "prose quickxml 0" "prose quickxml_doc 0" "dense ours 0" "dense ours 4" "dense ours 1" "dense ours_wf 0" \
           "dense quickxml 0" "plain ours 0" "plain ours 4" "plain ours 1" "plain memchr 0" \
           "plain ours_wf 0" "plain quickxml 0" "one_line ours 0" "one_line ours 4" \
           "one_line ours 1" "unicode ours 0" "unicode ours 4" "unicode ours 1" \
           "unicode ours_str 4" "unicode ours_str 1" "unicode ours_stops 0" "unicode collect 4" "unicode ours_wf 0" \
           "unicode quickxml 0" "prose floor 0"; do
  set -- $run
  base=$(instr "$2" "$1" 0 0)
  total=$(instr "$2" "$1" 1 "$3")
  echo "{\"kind\":\"instr\",\"shape\":\"$1\",\"engine\":\"$2\",\"chunk\":$3,\"bytes\":1048576,\"instr\":$((total - base))}" >> "$out"
  echo "$1 $2 chunk=$3: $((total - base)) instructions"
done

# Instructions per construct (callgrind): 1,000 lines of one kind of markup from the prose
# corpus (`corpus::CONSTRUCTS`; numbered lines), each program's count minus the same run with
# ITERS=0, divided by 1,000: what one line with that construct costs each program. Ours and
# kindaxml read the line as the corpus writes it; quick-xml, and ours again, its well-formed
# form. (kindaxml is quadratic: its count per line grows with the number of lines.)
lines=1000
construct_instr() { # CONSTRUCT ENGINE ITERS -> instruction count
  CONSTRUCT=$1 ENGINE=$2 profile_instr prose "$lines" "$3"
}
for construct in text postfix_cite postfix_cite_2_attrs closed_cite note todo_marker unknown_tags; do
  for engine in ours ours_wf quickxml quickxml_doc kindaxml floor; do
    n=$(( $(construct_instr $construct $engine 1) - $(construct_instr $construct $engine 0) ))
    echo "{\"kind\":\"instr_construct\",\"construct\":\"$construct\",\"engine\":\"$engine\",\"lines\":$lines,\"instr\":$n}" >> "$out"
    echo "$construct $engine: $((n / lines)) instructions a line"
  done
done

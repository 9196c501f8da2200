#!/usr/bin/env bash
# Runs the benchmarks and regenerates BENCHMARKS.md. Takes ~30 minutes on 2 cores.
#   scripts/benchmarks.sh            # all shapes and sizes
#   KXS_BENCH_SIZES=64K scripts/benchmarks.sh   # quicker
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf target/criterion
export KXS_BENCH_SHAPES="${KXS_BENCH_SHAPES:-prose,dense,plain,unicode,lt_flood,open_quote,one_line,amp_flood,deep_nest}"
cargo bench --bench throughput
# Prose also at 10 MB (kindaxml there: bench_extra.sh, since one of its runs takes seconds).
KXS_BENCH_SHAPES=prose KXS_BENCH_SIZES=10M KXS_BENCH_SCALING=0 cargo bench --bench throughput
cargo bench --bench stream --features stream
cargo bench --bench llm_response
cargo bench --bench allocations
scripts/bench_extra.sh
python3 scripts/bench_table.py > BENCHMARKS.md
echo "wrote BENCHMARKS.md"

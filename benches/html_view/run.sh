#!/usr/bin/env bash
# The HTML view of the search against its JSON (issue 26, BENCHMARKS.md "Search: the HTML
# view"): svcdir-search (release) on the index of the search benchmark at N services, the
# same queries timed in both formats with wrk, in alternating rounds.
#
#   SVCDIR_BENCH_SIZES=100000 SVCDIR_BENCH_SECONDS=3 SVCDIR_BENCH_KEEP=1 cargo bench --bench search_load
#   cargo build --release --bin svcdir-search
#   bash benches/html_view/run.sh 100000   # nothing else busy on the machine
#
# `SVCDIR_SEARCH=path` times another build of the server (e.g. a copy of the one before a change),
# `SVCDIR_INDEX=path` another index of the same dataset (one of the format that build reads).
# Needs wrk (Debian's `wrk`). Traffic goes to 127.0.0.1 only; the server is stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
size=${1:-100000}
seconds=${SECONDS_EACH:-10}
rounds=${ROUNDS:-3}
index=${SVCDIR_INDEX:-target/bench-search/search-$size.idx}
queries=target/bench-search/queries-$size.txt
[ -f "$index" ] && [ -f "$queries" ] || { echo "no $index or $queries: run the search benchmark with SVCDIR_BENCH_KEEP=1 first" >&2; exit 1; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RUST_LOG=info,svcdir::access=off "${SVCDIR_SEARCH:-target/release/svcdir-search}" --index "$index" --listen "127.0.0.1:$port" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
run() {
    wrk -t2 -c32 -d"${1}s" --latency -s benches/html_view/requests.lua "http://127.0.0.1:$port" -- "$queries" "$2"
}
# Warm-up of both, then alternating rounds: whatever else the machine does weighs on both alike.
run 2 json >/dev/null
run 2 api >/dev/null
for round in $(seq 1 "$rounds"); do
    for format in json api; do
        echo "== round $round, format=$format"
        run "$seconds" "$format" | grep -E "Latency  |50%|99%|Requests/sec|Transfer/sec|Non-2xx"
    done
done

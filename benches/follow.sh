#!/usr/bin/env bash
# `make bench-follow` (issue 21): the time from the end of a `svcdir publish` to three
# `svcdir-search --from s3://... --poll 2` replicas all serving the new index, and what the
# index object adds to a publish, against a local S3 server (moto, `.ci/run` installs it
# into target/s3-venv). SERVICES (default "10000 100000") sets the sizes.
#
# For each size: two sampled datasets (seeds 1 and 2) are built with the release binaries;
# the first build's `_search/` (index and pointer: all a replica reads) is published to an
# empty bucket, timed; three replicas start and fetch it; then the second build's `_search/`
# is published and the time until every replica's /healthz shows its index_hash is measured
# (poll, fetch, check against the name, swap). The static files are left out of the bucket:
# the replicas never read them, and a full publish of them to moto takes minutes
# (BENCHMARKS.md, "Publish to object storage").
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release}
MOTO=${MOTO:-target/s3-venv/bin/moto_server}
SIZES=${SERVICES:-10000 100000}
[ -x "$MOTO" ] || { echo "no $MOTO: run .ci/run (or pip install 'moto[server]' into target/s3-venv)"; exit 1; }
. tools/sh/processes.sh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/svcdir-bench-follow.XXXXXX")

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
health_hash() { curl -s "http://$1/healthz" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("index_hash") or "")' 2>/dev/null || true; }

port=$(free_port)
"$MOTO" -H 127.0.0.1 -p "$port" >"$WORK/moto.log" 2>&1 &
PIDS+=($!)
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.1; done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true

echo "| services | index MB | index publish s | publish → 3 replicas on the new index s | each replica's swap, s after the publish | fetch + check + prepare, ms |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
    dir="$WORK/$n"
    mkdir -p "$dir"
    for seed in 1 2; do
        "$BIN/svcdir" sample --services "$n" --seed "$seed" --output "$dir/input-$seed" >/dev/null
        SVCDIR_UNSAFE_NO_SYNC=1 "$BIN/svcdir" build --quiet --input "$dir/input-$seed" --output "$dir/public-$seed" \
            --index "$dir/search-$seed.idx" --base-url https://api.example.org
        mkdir -p "$dir/only-$seed"
        cp -r "$dir/public-$seed/_search" "$dir/only-$seed/"
    done
    bucket="follow-$n"
    curl -sf -X PUT "http://127.0.0.1:$port/$bucket" >/dev/null
    to="s3://$bucket/site"
    started=$(now)
    "$BIN/svcdir" publish --public "$dir/only-1" --to "$to" --json >"$dir/publish-1.json"
    index_publish=$(elapsed "$started" "$(now)")
    first=$(python3 -c "import json; print(json.load(open('$dir/public-1/_search/current.json'))['index'])")
    second=$(python3 -c "import json; print(json.load(open('$dir/public-2/_search/current.json'))['index'])")
    mb=$(python3 -c "import os; print(f'{os.path.getsize(\"$dir/search-2.idx\") / 1e6:.1f}')")
    addresses=()
    for r in 1 2 3; do
        rport=$(free_port)
        "$BIN/svcdir-search" --from "$to" --cache "$dir/cache-$r" --poll 2 --listen "127.0.0.1:$rport" \
            --log-format json 2>"$dir/replica-$r.log" &
        PIDS+=($!)
        addresses+=("127.0.0.1:$rport")
    done
    for a in "${addresses[@]}"; do until [ "$(health_hash "$a")" = "$first" ]; do sleep 0.05; done; done
    "$BIN/svcdir" publish --public "$dir/only-2" --to "$to" --json >"$dir/publish-2.json"
    published=$(now)
    for a in "${addresses[@]}"; do
        until [ "$(health_hash "$a")" = "$second" ]; do sleep 0.02; done
    done
    all=$(elapsed "$published" "$(now)")
    # Each replica's own log: when it put the new index in force, and its load time.
    swaps=$(python3 - "$published" "$second" "$dir"/replica-*.log <<'PY'
import datetime, json, sys
published, second, logs = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
at, loads = [], []
for log in logs:
    for line in open(log):
        event = json.loads(line)
        fields = event.get("fields", event)
        if "new index is in force" in str(fields.get("message", "")) and fields.get("index_hash") == second:
            stamp = datetime.datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00")).timestamp()
            at.append(f"{stamp - published:.2f}")
            loads.append(str(fields.get("fetch_and_load_ms")))
print(" / ".join(at) + " | " + " / ".join(loads))
PY
)
    echo "| $n | $mb | $index_publish | $all | $swaps |"
    for pid in "${PIDS[@]:1}"; do kill "$pid" 2>/dev/null || true; done
    PIDS=("${PIDS[0]}")
    rm -rf "$dir"
done

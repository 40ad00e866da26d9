#!/usr/bin/env bash
# The HTML answers of two builds of svcdir-search, byte for byte (issue 26): each serves its
# own index of the same dataset (an index of another format version needs its own build),
# every query of a file is asked of both as the HTML view (`format=api`), and the answers
# (status line, Content-Type and body) are compared.
#
#   bash benches/html_view/same_bytes.sh QUERIES OLD_BINARY OLD_INDEX NEW_BINARY NEW_INDEX [EVERY]
#
# QUERIES: one path and query a line (e.g. the search benchmark's queries-N.txt); EVERY: ask
# every EVERY-th line only (default 1). Traffic goes to 127.0.0.1 only; both servers are
# stopped at the end. Exit 1 when any answer differs.
set -euo pipefail
[ $# -ge 5 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
queries=$1 every=${6:-1}
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start() { # binary index port name
    RUST_LOG=warn "$1" --index "$2" --listen "127.0.0.1:$3" >"$work/$4.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 600); do
        curl -fs "http://127.0.0.1:$3/healthz" >/dev/null 2>&1 && return
        sleep 0.1
    done
    echo "$4 did not start: $(cat "$work/$4.log")" >&2
    exit 1
}
old=$(free_port)
new=$(free_port)
start "$2" "$3" "$old" old
start "$4" "$5" "$new" new
asked=0 differ=0
while IFS= read -r line; do
    asked=$((asked + 1))
    [ $(((asked - 1) % every)) -eq 0 ] || continue
    sep='?'
    case $line in *\?*) sep='&' ;; esac
    for side in old new; do
        port=$old
        [ $side = new ] && port=$new
        curl -s -o "$work/$side.body" -w '%{http_code} %{content_type}\n' \
            "http://127.0.0.1:$port$line${sep}format=api" >"$work/$side.head"
    done
    if ! cmp -s "$work/old.head" "$work/new.head" || ! cmp -s "$work/old.body" "$work/new.body"; then
        differ=$((differ + 1))
        echo "differs: $line" >&2
    fi
done <"$queries"
echo "$(( (asked + every - 1) / every )) queries asked, $differ answers differ"
[ "$differ" -eq 0 ]

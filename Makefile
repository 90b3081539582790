# resetctl: the two commands are `make run` and `make test`.
# Everything a fresh machine with only the Rust toolchain needs is set up here.

CARGO    ?= cargo
DATA_DIR ?= $(CURDIR)/data
BIN      := target/release/resetctl

.PHONY: run test test-deps fresh-test bench bench-deps man lint fmt clean

LISTEN   ?= 127.0.0.1:8080

## run: build, seed ./data with the bundled history when it is empty, and serve it on $(LISTEN)
run:
	$(CARGO) build --release --locked
	@if ! $(BIN) --data-dir "$(DATA_DIR)" status >/dev/null 2>&1; then \
		echo "seeding $(DATA_DIR) with the bundled history"; \
		$(BIN) --data-dir "$(DATA_DIR)" seed; \
	fi
	$(BIN) --data-dir "$(DATA_DIR)" status
	$(BIN) --data-dir "$(DATA_DIR)" serve --listen "$(LISTEN)"

VENV     := $(CURDIR)/.venv
REQS     := $(CURDIR)/tests/requirements.txt
# apt-get as root, or through sudo. sudo's env_reset drops DEBIAN_FRONTEND,
# so it is passed on the command line (sudo VAR=value cmd), never inherited.
APT_GET  := $(shell [ "$$(id -u)" = 0 ] && echo "env DEBIAN_FRONTEND=noninteractive apt-get" || echo "sudo DEBIAN_FRONTEND=noninteractive apt-get")

## test-deps: install what the tests need: redis-server, nginx, python3 and python3-venv (apt-get, when missing), the pinned PyPI tools of tests/requirements.txt (into .venv)
test-deps: $(VENV)/.installed
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing with apt-get"; \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; \
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

## test: set up, then run every test (unit, black-box, man-page freshness)
test: test-deps
	$(CARGO) build --locked --all-targets
	$(CARGO) test --locked --workspace

## fresh-test: `make test` in a fresh clone of HEAD (no .venv, no target/), as on a new machine
fresh-test:
	@tmp=$$(mktemp -d) && git clone --quiet "$(CURDIR)" "$$tmp/resetctl" && \
	$(MAKE) -C "$$tmp/resetctl" test; status=$$?; rm -rf "$$tmp"; exit $$status

## bench-deps: install wrk, nginx, redis-server, GNU time and taskset with apt-get when they are missing
bench-deps:
	@missing=""; \
	command -v wrk >/dev/null 2>&1 || missing="$$missing wrk"; \
	command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing="$$missing nginx"; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	[ -x /usr/bin/time ] || missing="$$missing time"; \
	command -v taskset >/dev/null 2>&1 || missing="$$missing util-linux"; \
	if [ -n "$$missing" ]; then \
		$(APT_GET) update -qq && $(APT_GET) install -y -qq $$missing; \
	fi

## bench: criterion for hot functions, then wrk against resetctl and nginx (see docs/benchmarks.md)
bench: bench-deps
	$(CARGO) bench --locked --bench snapshot --bench limiter
	$(CARGO) build --release --locked
	mkdir -p bench-out
	PATH="$$PATH:/usr/sbin" python3 bench/http_bench.py > bench-out/http.md
	PATH="$$PATH:/usr/sbin" python3 bench/sync_bench.py > bench-out/sync.md
	cat bench-out/http.md bench-out/sync.md

## man: regenerate man/ from the clap definitions
man:
	$(CARGO) run --quiet --locked -- man man

## lint: formatting, clippy with warnings as errors, and docs
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --locked --no-deps --workspace

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean

# resetctl: the two commands are `make run` and `make test`.
# Everything a fresh machine with only the Rust toolchain needs is set up here.

CARGO    ?= cargo
DATA_DIR ?= $(CURDIR)/data
BIN      := target/release/resetctl

.PHONY: run test test-deps bench man lint fmt clean

## run: build, seed ./data with the bundled history when it is empty, and show what is published
run:
	$(CARGO) build --release --locked
	@if ! $(BIN) --data-dir "$(DATA_DIR)" status >/dev/null 2>&1; then \
		echo "seeding $(DATA_DIR) with the bundled history"; \
		$(BIN) --data-dir "$(DATA_DIR)" seed; \
	fi
	$(BIN) --data-dir "$(DATA_DIR)" status

## test-deps: install what the tests need (nothing beyond the Rust toolchain yet)
test-deps:
	@true

## test: set up, then run every test (unit, black-box, man-page freshness)
test: test-deps
	$(CARGO) build --locked --all-targets
	$(CARGO) test --locked --workspace

## bench: criterion figures for the hot functions (see docs/benchmarks.md)
bench:
	$(CARGO) bench --locked --bench snapshot

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

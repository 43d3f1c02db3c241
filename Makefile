# autocoder: build, test, demo, bench, lint, generate, install.
PREFIX ?= /usr/local
DESTDIR ?=
CARGO ?= cargo
# The installed and benchmarked binary is linked statically, and against musl when its Rust
# target is installed (`rustup target add x86_64-unknown-linux-musl`), else against glibc. Start-up
# matters when the sandbox runs hundreds of times per repair (the README's performance section
# has the figures): on virtual machines glibc's start-up probes the CPU's caches with dozens of
# CPUID instructions, each a trap to the hypervisor.
HOST := $(shell rustc -vV | sed -n 's/^host: //p')
SYSROOT := $(shell rustc --print sysroot)
MUSL := $(subst -gnu,-musl,$(HOST))
TARGET := $(if $(wildcard $(SYSROOT)/lib/rustlib/$(MUSL)/lib),$(MUSL),$(HOST))
RELEASE := target/$(TARGET)/release/autocoder
STATIC_FLAGS := -C target-feature=+crt-static -C relocation-model=static
.PHONY: build test demo bench lint generate install

build:
	RUSTFLAGS="$(STATIC_FLAGS)" $(CARGO) build --release --locked --target $(TARGET) --bin autocoder

# The tests start real runners, SDK clients and a Docker engine: installed first, when missing.
test:
	@scripts/install-test-tools.sh
	$(CARGO) test --locked --all-targets

demo: build
	@scripts/demo.sh $(RELEASE)

bench: build
	@scripts/bench-sandbox.sh $(RELEASE)
	@scripts/bench-run-tests.sh $(RELEASE)
	@scripts/bench-mcp.sh $(RELEASE)
	@scripts/bench-heal.sh $(RELEASE)
	@scripts/bench-mutate.sh $(RELEASE)
	@scripts/bench-review.sh $(RELEASE)
	@scripts/bench-realbugs.sh $(RELEASE)

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

generate:
	$(CARGO) run --quiet --locked -- generate man --out-dir man
	$(CARGO) run --quiet --locked -- generate completions --out-dir completions

install: build
	install -Dm755 $(RELEASE) $(DESTDIR)$(PREFIX)/bin/autocoder
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -Dm644 completions/autocoder.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/autocoder
	install -Dm644 completions/_autocoder $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_autocoder
	install -Dm644 completions/autocoder.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/autocoder.fish

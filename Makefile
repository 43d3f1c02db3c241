# autocoder: build, test, demo, bench, lint, generate, install, hot-functions.
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
# The binary is linked by the toolchain's lld, which puts the functions a sandbox run executes
# first and together, in the order it reaches them (scripts/hot-functions.txt): the 8 MB of code
# are then paged in a few pages at a time, not one fault per function (the README's performance
# section has the figures). `make hot-functions` (uprobes, as root) lists them again
# once the code has changed; a name the linker does not find is skipped. Without lld (a toolchain
# that does not ship it) or without the list, the default linker and order.
HOT_FUNCTIONS := scripts/hot-functions.txt
LLD_DIR := $(SYSROOT)/lib/rustlib/$(HOST)/bin/gcc-ld
LLD_FLAGS := -C link-arg=-fuse-ld=lld -C link-arg=-B$(LLD_DIR) \
	-C link-arg=-Xlinker -C link-arg=--symbol-ordering-file=$(CURDIR)/$(HOT_FUNCTIONS) \
	-C link-arg=-Xlinker -C link-arg=--no-warn-symbol-ordering
LINK_FLAGS := $(if $(and $(wildcard $(LLD_DIR)/ld.lld),$(wildcard $(HOT_FUNCTIONS))),$(LLD_FLAGS))
# Uprobes need root; the build does not.
AS_ROOT := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: build test demo bench lint generate install hot-functions

build:
	@# cargo does not know the list is an input to the link: a newer list has the binary linked again.
	@if [ $(HOT_FUNCTIONS) -nt $(RELEASE) ]; then touch src/main.rs; fi
	RUSTFLAGS="$(STATIC_FLAGS)" $(CARGO) rustc --release --locked --target $(TARGET) --bin autocoder -- $(LINK_FLAGS)

hot-functions: build
	$(AS_ROOT) scripts/hot-functions.py $(RELEASE) $(HOT_FUNCTIONS)
	$(MAKE) build

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

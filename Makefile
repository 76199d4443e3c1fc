# halo-run — see README.md. `make check` on a fresh Debian 12 machine as root installs
# what is missing, builds, and runs every test.

PREFIX  ?= /usr/local
DESTDIR ?=
MANDIR  ?= $(PREFIX)/share/man
# The names halo-run answers to as a shell (runner/shell.c): a link each, in build/,
# `make install` and the package.
HALO_LINKS ?= halo-sh halo-bash
VERSION := $(shell sed -n 's/^\#define HALO_VERSION "\(.*\)"$$/\1/p' runner/cli.c)
# PLATFORM=portable: the macOS code path (macos/ launcher, the proxy on poll(),
# self-pipes instead of signalfd and pidfd) built on Linux with nothing Linux-only in
# it — no linux/, no netns/, no libseccomp or libcap. A test vehicle only: it
# honours $HALO_TEST_SANDBOX_EXEC (a fake sandbox-exec). See `make check-portable`.
# PLATFORM=macos (the default on Darwin) is the same code path for a real Mac, without
# the test override; it has not been run on a Mac yet.
PLATFORM ?= $(if $(filter Darwin,$(shell uname -s 2>/dev/null)),macos,linux)
ifeq ($(PLATFORM),portable)
BUILD   ?= build-portable
endif
BUILD   ?= build
CC      ?= cc
FUZZCC  ?= clang
FUZZ_SECONDS ?= 60
SMOKE_RUNS   ?= 10000 # make check's pass over every target (make fuzz: FUZZ_SECONDS each)

# The one place that names Debian packages: build deps, test deps, bench deps.
DEB_BUILD := build-essential pkg-config libcjson-dev libyaml-dev libseccomp-dev libcap-dev \
	check libssl-dev libssl3 python3
DEB_TEST  := clang libclang-rt-14-dev util-linux iproute2 procps curl wget git python3 \
	python3-requests bubblewrap hyperfine golang-go cargo python3-venv openssh-client dnsutils \
	openssh-server tinyproxy node-ws gnutls-bin socat ripgrep python3-yaml man-db publicsuffix \
	strace zsh
# zsh: t_zsh.sh runs the host's zsh after a sandbox tried to plant its start-up files.
# strace: t_proxy_syscalls.sh counts the proxy's system calls per tunnel (skipped without).
# libssl3: libssl.so.3, which halo-run loads when a policy first terminates TLS
# (proxy/tls_lib.c; the .deb depends on it).
# publicsuffix: the Public Suffix List that `learn --wildcards` reads (without it no
# "*.x" is proposed).
# node-ws: the `ws` WebSocket library (t_capture.sh); it depends on nodejs:any, which
# nodesource's nodejs satisfies.
# npm only where no npm is on PATH: Debian's package conflicts with nodesource's nodejs.
DEB_NPM   := npm
DEB_BENCH := tinyproxy squid
# From the npm registry: the harness CLI whose own validator checks what `policy render
# --hook` and `--proxy` write (t_hook_wrap.sh, t_render_proxy.sh), and srt, the sandbox
# runtime Claude Code's sandbox is built on, which runs a command with the rendered proxy
# ports (t_render_proxy.sh; it needs socat and ripgrep); skipped, with the reason, where
# they are missing.
NPM_TEST  := @anthropic-ai/claude-code@2.1.197 @anthropic-ai/sandbox-runtime@0.0.78
# From the npm registry too: the package managers whose own config warnings and caches
# t_wf_pnpm.sh checks, one prefix each under NODE_TOOLS (about 90 MB; rows skip, with
# the reason, where one is missing). npm 9.2.0 is Debian 12's npm, which conflicts with
# nodesource's nodejs.
NODE_TOOLS := /opt/halo-it-node
NPM_TOOLS := pnpm8=pnpm@8.15.9 pnpm9=pnpm@9.15.9 pnpm10=pnpm@10.34.9 yarn1=yarn@1.22.22 \
	yarn4=@yarnpkg/cli-dist@4.18.1 npm9=npm@9.2.0
DEB_ALL   := $(DEB_BUILD) $(DEB_TEST)

PKGS := libcjson yaml-0.1 libseccomp libcap libssl libcrypto

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# The halo-run binary: libseccomp is only used at build time (tools/gen_seccomp), and
# the libraries whose -dev packages ship an archive are linked in statically — every
# shared library costs the launch its loading and relocation. libcjson has no archive.
# OpenSSL (TLS termination, proxy/tls.c) is linked in statically too, except where
# it is loaded on first use (SSL_LAZY, below).
BIN_STATIC_PKGS := yaml-0.1 libssl libcrypto
BIN_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(BIN_STATIC_PKGS) 2>/dev/null) -Wl,-Bdynamic \
	$(shell pkg-config --libs libcjson 2>/dev/null) -pthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

SAN ?=
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT := -O1
else
SANFLAGS :=
OPT := -O2
endif

WARN    := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral
CFLAGS  ?= $(OPT) -g
ALL_CFLAGS  = -std=gnu11 $(WARN) $(CFLAGS) $(SANFLAGS) -D_GNU_SOURCE -I. -I$(BUILD)/gen $(PKG_CFLAGS) \
	$(PLATFORM_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS)

MODULES := policy plan render rlimits netns proxy linux macos hook learn launch opts env events report session trust runner
PLATFORM_CFLAGS :=
PLATFORM_EXCLUDE :=
ifneq ($(filter portable macos,$(PLATFORM)),)
MODULES := policy plan render rlimits proxy macos hook learn launch opts env events report runner
PKGS := libcjson yaml-0.1
# Sessions and the trust commands (doctor, verify and their probes) inspect or drive
# Linux layers: their folders are left out above; the macOS code path has stand-ins
# in runner/portable.c, as for the index and the standalone proxy.
PLATFORM_EXCLUDE := runner/index_cmd.c runner/proxy_cmd.c
endif
ifeq ($(PLATFORM),portable)
BIN_STATIC_PKGS := yaml-0.1
BIN_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(BIN_STATIC_PKGS) 2>/dev/null) -Wl,-Bdynamic \
	$(shell pkg-config --libs libcjson 2>/dev/null)
PLATFORM_CFLAGS := -DHALO_PORTABLE -DHALO_SANDBOX_EXEC_OVERRIDE
endif
ifeq ($(PLATFORM),macos)
BIN_LIBS = $(shell pkg-config --libs yaml-0.1 libcjson 2>/dev/null) # Apple's ld: no -Bstatic
endif
# OpenSSL on first use (x86-64 Linux; not the ASan build): the binary does not link
# libssl and libcrypto but calls a trampoline per OpenSSL function, generated from the
# objects' undefined symbols (tools/gen_ssl_stubs.sh), that proxy/tls_lib.c points at
# libssl.so.3 when a policy first terminates TLS. Linked in (statically or not), their
# ~18,500 relocations cost every launch ~100 page faults, TLS or not. Elsewhere, and in
# the unit tests and fuzz targets, OpenSSL is linked as it was.
SSL_LAZY := $(if $(and $(filter linux,$(PLATFORM)),$(filter x86_64-%,$(shell $(CC) -dumpmachine 2>/dev/null)),$(if $(filter 1,$(SAN)),,1)),1,)
SSL_STUBS :=
ifeq ($(SSL_LAZY),1)
BIN_STATIC_PKGS := $(filter-out libssl libcrypto,$(BIN_STATIC_PKGS))
SSL_STUBS := $(BUILD)/gen/ssl_stubs.o
SSL_LIBDIR = $(shell pkg-config --variable=libdir libssl 2>/dev/null)
endif
# libcjson the same way (where OpenSSL is; runner/cjson_lib.c): it has no archive to
# link in, and most launches read and write no JSON, so the loader need not open, map
# and relocate it at every exec.
CJSON_LAZY := $(SSL_LAZY)
CJSON_STUBS :=
ifeq ($(CJSON_LAZY),1)
CJSON_STUBS := $(BUILD)/gen/cjson_stubs.o
CJSON_LIBDIR = $(shell pkg-config --variable=libdir libcjson 2>/dev/null)
BIN_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(BIN_STATIC_PKGS) 2>/dev/null) -Wl,-Bdynamic -pthread
endif
LIB_SRC := $(filter-out runner/main.c $(PLATFORM_EXCLUDE),$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
BIN     := $(BUILD)/halo-run
MAN     := $(BUILD)/man/halo-run.1 $(BUILD)/man/halo-run-policy.5

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
ifneq ($(filter portable macos,$(PLATFORM)),)
# What the macOS code path uses: the profile, the environment, the proxy on poll().
UNIT_SRC  := $(addprefix tests/unit/,test_plan.c test_sbpl.c test_sbpl_paths.c test_env.c test_rlimits.c test_poller.c \
	test_http.c test_chunked.c test_socks5.c test_proxy.c test_proxy_fwd.c test_proxy_chunked.c \
	test_proxy_units.c test_proxy_hostport.c test_proxy_sni.c test_tls_hello.c test_tls_retry.c \
	test_proxy_hrr.c test_hook.c test_hook_bash.c)
endif
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
HELP_SRC  := $(wildcard tests/helpers/*.c)
ifeq ($(PLATFORM),portable)
HELP_SRC  := tests/helpers/fake_sandbox_exec.c tests/helpers/it_sup.c
endif
ifeq ($(PLATFORM),macos)
HELP_SRC  :=
endif
HELP_BIN  := $(HELP_SRC:tests/helpers/%.c=$(BUILD)/helpers/%)
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
POLICY_SRC := $(wildcard policy/*.c)

.PHONY: all deps check check-builds check-includes unit-early unit-late check-overlay check-container unit unit-bins integration integration-v6 asan fuzz fuzz-smoke bench install man format clean helpers \
	check-portable deb check-deb

all: $(BIN) helpers $(MAN)

helpers: $(HELP_BIN)

# Quiet by default (one line per file); `make V=1` shows the commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# `make deps all -j4`: nothing is compiled before the packages are in (an order-only
# prerequisite, there only when deps is asked for on the same command line).
DEPS_FIRST := $(filter deps,$(MAKECMDGOALS))

$(BUILD)/%.o: %.c $(wildcard */*.h) | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libhalo.a: $(LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BIN): $(BUILD)/runner/main.o $(SSL_STUBS) $(CJSON_STUBS) $(BUILD)/libhalo.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(BIN_LIBS)
	@for l in $(HALO_LINKS); do ln -sf halo-run $(BUILD)/$$l; done

# The OpenSSL trampolines (SSL_LAZY), from what the objects call: a call added gets its
# trampoline with the next build. The script refuses a data symbol, and a call from
# outside the TLS termination's files (proxy/tls*.c, proxy/conn_tls*.c).
$(BUILD)/gen/ssl_stubs.S: tools/gen_ssl_stubs.sh $(BUILD)/runner/main.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  GEN     $@"
	$(Q)SSL_CALLERS='/proxy/(tls|conn_tls)[a-z_]*\.o$$' tools/gen_ssl_stubs.sh $@ "$(SSL_LIBDIR)/libssl.so $(SSL_LIBDIR)/libcrypto.so" \
		$(filter %.o,$^)

$(BUILD)/gen/ssl_stubs.o: $(BUILD)/gen/ssl_stubs.S
	$(Q)$(CC) -c -o $@ $<

# The libcjson trampolines (CJSON_LAZY), the same way; any file may call cJSON.
$(BUILD)/gen/cjson_stubs.S: tools/gen_ssl_stubs.sh $(BUILD)/runner/main.o $(LIB_OBJ)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  GEN     $@"
	$(Q)STUBS=halo_cjson STUBS_BIND=runner_cjson_lib_bind STUBS_WHAT=libcjson \
		tools/gen_ssl_stubs.sh $@ "$(CJSON_LIBDIR)/libcjson.so" $(filter %.o,$^)

$(BUILD)/gen/cjson_stubs.o: $(BUILD)/gen/cjson_stubs.S
	$(Q)$(CC) -c -o $@ $<

# The seccomp filter, built from the deny table by libseccomp at build time and
# compiled into linux/seccomp.o (see linux/seccomp_int.h). The generator is not in a
# module folder, so it never lands in libhalo.a with its own main.
$(BUILD)/gen/gen_seccomp: tools/gen_seccomp.c $(BUILD)/linux/seccomp_build.o \
		$(BUILD)/linux/seccomp_table.o linux/seccomp_int.h | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.c %.o,$^) $(PKG_LIBS)

$(BUILD)/gen/seccomp_bpf.h: $(BUILD)/gen/gen_seccomp
	$< $@.tmp && mv $@.tmp $@

$(BUILD)/linux/seccomp.o: $(BUILD)/gen/seccomp_bpf.h

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libhalo.a $(wildcard tests/unit/*.h) | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CCLD    $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libhalo.a $(PKG_LIBS) $(CHECK_LIBS)

# test_tls_lib drives the trampolines' slow path where the build makes them: linked
# with them (ahead of OpenSSL, which it links too, to check the slots against).
ifeq ($(SSL_LAZY),1)
$(BUILD)/tests/test_tls_lib: tests/unit/test_tls_lib.c $(SSL_STUBS) $(BUILD)/libhalo.a | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CCLD    $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(SSL_STUBS) $(BUILD)/libhalo.a $(PKG_LIBS) $(CHECK_LIBS)
endif

$(BUILD)/helpers/%: tests/helpers/%.c $(BUILD)/libhalo.a | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CCLD    $@"
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libhalo.a $(PKG_LIBS)

# Install the Debian packages that are missing (apt-get update first). Silent when
# everything is there; a clear message when it cannot install.
deps:
	@missing=$$(for p in $(DEB_ALL); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	command -v npm >/dev/null || missing="$$missing $(DEB_NPM)"; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null; then echo "make deps: install these packages by hand: $$missing" >&2; exit 1; fi; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: missing packages ($$missing); run as root or: sudo apt-get install $$missing" >&2; exit 1; fi; \
		echo "make deps: installing $$missing"; \
		own_rc=; if [ ! -e /usr/sbin/policy-rc.d ]; then own_rc=1; printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; rc=$$?; \
		[ -z "$$own_rc" ] || rm -f /usr/sbin/policy-rc.d; [ $$rc = 0 ] || exit $$rc; \
	fi; \
	if { ! command -v claude >/dev/null || ! command -v srt >/dev/null; } && [ "$$(id -u)" = 0 ]; then \
		echo "make deps: installing $(NPM_TEST) from npm"; \
		npm install -g --silent --no-audit --no-fund $(NPM_TEST) >/dev/null 2>&1 || \
			echo "make deps: npm install $(NPM_TEST) failed; the tests that need it will skip" >&2; \
	fi; \
	for t in $(NPM_TOOLS); do \
		d=$(NODE_TOOLS)/$${t%%=*}; [ -e "$$d/.installed" ] || [ "$$(id -u)" != 0 ] && continue; \
		echo "make deps: installing $${t#*=} from npm into $$d"; \
		npm install -g --silent --no-audit --no-fund --prefix "$$d" "$${t#*=}" >/dev/null 2>&1 && \
			touch "$$d/.installed" || \
			echo "make deps: npm install $${t#*=} failed; the tests that need it will skip" >&2; \
	done

deps-bench: deps
	@apt-get install -y -qq --no-install-recommends $(DEB_BENCH) >/dev/null 2>&1 || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEB_BENCH) >/dev/null; }

# The whole suite: unit tests, integration tests (as root and as an unprivileged user),
# the unit tests again under ASan+UBSan, and a short fuzz smoke pass of every target.
# The builds use every CPU (-j$(nproc)) unless make was given its own -j; the
# integration scripts run IT_JOBS at a time (tests/integration/run.sh).
CHECK_J = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
# The other builds (ASan, fuzz targets, portable) are compiled, then the fuzz smoke pass
# (a fixed number of runs, no clock in it), the ASan unit tests (but UNIT_VARTMP's,
# after the integration scripts) and the portable phase (its launches wait on a fake
# sandbox-exec and a terminal, they hardly compute) run, one after another and at a
# lower priority, while the unit tests and the integration scripts run: those wait on sockets, timers and launches more than they compute (the
# integration scripts use about 400 of the 760 CPU-seconds that their 380 s on 2 CPUs
# offer), and the ASan phase after them, alone, made the suite a minute longer. What
# the background prints is shown once it is done (all of it if it failed). Each phase
# prints its seconds.
check: deps check-includes
	@t=$$(date +%s); $(MAKE) $(CHECK_J) all unit-bins deb || exit 1; echo "make check: build (and the .deb t_docs looks into), $$(($$(date +%s) - t)) s"
	@t=$$(date +%s); mkdir -p $(BUILD); \
	(s=$$(date +%s); nice -n 10 $(MAKE) $(CHECK_J) check-builds && \
		echo "make check: the other builds (in the background), $$(($$(date +%s) - s)) s" && \
		s=$$(date +%s) && nice -n 10 $(MAKE) $(CHECK_J) fuzz-smoke && \
		echo "make check: fuzz-smoke (in the background), $$(($$(date +%s) - s)) s" && \
		s=$$(date +%s) && UNIT_JOBS=2 nice -n 10 $(MAKE) BUILD=build-asan SAN=1 unit-early && \
		echo "make check: asan-unit but $(UNIT_VARTMP) (in the background), $$(($$(date +%s) - s)) s" && \
		s=$$(date +%s) && nice -n 10 $(MAKE) check-portable && \
		echo "make check: portable (in the background), $$(($$(date +%s) - s)) s") >$(BUILD)/check-builds.log 2>&1 & b=$$!; \
	$(MAKE) unit && $(MAKE) integration && $(MAKE) IT_ONLY="$(V6_SCRIPTS)" integration-v6; rc=$$?; \
	echo "make check: unit and integration, $$(($$(date +%s) - t)) s"; \
	if wait $$b; then grep -E '^(fuzz-smoke|unit|integration|--- |make check): ' $(BUILD)/check-builds.log; \
	else rc=1; cat $(BUILD)/check-builds.log; echo "make check: the builds, fuzz-smoke, asan-unit or the portable phase failed" >&2; fi; \
	s=$$(date +%s); $(MAKE) BUILD=build-asan SAN=1 unit-late || rc=1; \
	echo "make check: asan-unit of $(UNIT_VARTMP), $$(($$(date +%s) - s)) s"; \
	echo "make check: all phases, $$(($$(date +%s) - t)) s"; exit $$rc
	@echo "make check: all suites passed"

# What the later phases of `make check` run, built and not run.
check-builds:
	$(MAKE) BUILD=build-asan SAN=1 unit-bins
	$(MAKE) $(FUZZ_BIN)
	$(MAKE) PLATFORM=portable BUILD=$(PORTABLE_BUILD) all unit-bins

# Every `#include "folder/..."` is an arrow HACKING.md's module table allows (and no
# folder includes another's *_int.h): tools/check_includes.sh reads the table.
# ... and no source file (tests aside) is over 600 lines: a sign to split it.
check-includes:
	@tools/check_includes.sh --self-test
	@tools/check_includes.sh
	@big=$$(find $(MODULES) exit -name '*.[ch]' | xargs wc -l | awk '$$2 != "total" && $$1 > 600'); \
	if [ -n "$$big" ]; then echo "source files over 600 lines:"; echo "$$big"; exit 1; fi; \
	echo "check-includes: no source file over 600 lines"

# The macOS code path on Linux (PLATFORM=portable): the profile and proxy unit tests on
# the poll() backend, then the launcher driven through a fake sandbox-exec as root and
# as an unprivileged user; t_macos_portable.sh also checks with nm -u that no epoll,
# signalfd, timerfd, eventfd, splice, pidfd or clone3 symbol is linked in.
PORTABLE_BUILD ?= build-portable
check-portable:
	$(MAKE) PLATFORM=portable BUILD=$(PORTABLE_BUILD) all unit
	@IT_ONLY=t_macos_portable tests/integration/run.sh $(abspath $(PORTABLE_BUILD))

unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

unit-bins: $(UNIT_BIN)

# The unit binaries whose trees live in /var/tmp, where the sandbox sees them: a unix
# socket one binds there is a host service's to a session whose call comes then (the
# call is refused), so `make check` runs them after the integration scripts, the
# others beside them.
UNIT_VARTMP = test_agree test_pin test_scan test_scan_index test_landlock test_mounts
unit-early: $(UNIT_BIN)
	@tests/run-unit.sh $(filter-out $(addprefix $(BUILD)/tests/,$(UNIT_VARTMP)),$(UNIT_BIN))
unit-late: $(UNIT_BIN)
	@tests/run-unit.sh $(filter $(addprefix $(BUILD)/tests/,$(UNIT_VARTMP)),$(UNIT_BIN))

integration: all
	@tests/integration/run.sh $(abspath $(BUILD))

# The same as on a stock Debian 12, whose /etc/hosts maps localhost to ::1 as well as
# 127.0.0.1 (bind-mounted in a private mount namespace; root only, like the suite).
integration-v6: all
	@IT_HOSTS=v6 tests/integration/run.sh $(abspath $(BUILD))

# The scripts that name localhost: `make check` runs them again under that hosts file.
V6_SCRIPTS ?= t_proxy_harness t_hostports t_wf_hostports t_env

# As in a container or CI runner (/var/tmp on overlayfs, /tmp on tmpfs; root only, in
# a private mount namespace): the unit tests and the scripts that use the index.
OVERLAY_SCRIPTS ?= t_index t_leftover t_quiet t_verify t_plan
check-overlay: all $(UNIT_BIN)
	@tests/container/overlay.sh tests/run-unit.sh $(UNIT_BIN)
	@IT_ONLY="$(OVERLAY_SCRIPTS)" tests/container/overlay.sh tests/integration/run.sh $(abspath $(BUILD))

# As in a container or a CI runner, root file system and all (tests/container/root.sh:
# `/` an overlay over the real root, /var/tmp an overlay, /tmp a tmpfs, no systemd; root
# only, in a private mount namespace: nothing on the host changes): the unit tests, then
# the integration scripts as root and as uid 65534 (IT_ONLY="t_a t_b" for some of them).
check-container: all $(UNIT_BIN)
	@tests/container/root.sh tests/run-unit.sh $(UNIT_BIN)
	@tests/container/root.sh tests/integration/run.sh $(abspath $(BUILD))

asan-unit:
	$(MAKE) BUILD=build-asan SAN=1 unit

# The whole suite under ASan+UBSan, integration included.
asan:
	$(MAKE) BUILD=build-asan SAN=1 all unit
	ASAN_OPTIONS=detect_leaks=0 $(MAKE) BUILD=build-asan SAN=1 integration

# The code every fuzz target may call, compiled once (instrumented, not linked to the
# fuzzer's main) into one archive; each target links the members it uses.
FUZZ_SHARED := $(POLICY_SRC) $(wildcard render/*.c) $(wildcard rlimits/*.c) \
	$(wildcard proxy/http*.c) proxy/socks5.c proxy/tls_hello.c proxy/tls_retry.c proxy/dns.c \
	linux/unix_line.c linux/gitconf.c linux/scan_index.c linux/scan_index_mac.c linux/session_proto.c $(wildcard hook/*.c)
FUZZ_FLAGS  = -std=gnu11 -g -O1 -D_GNU_SOURCE -I. $(PKG_CFLAGS)
build-fuzz/obj/%.o: %.c $(wildcard */*.h) | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  FUZZCC  $<"
	$(Q)$(FUZZCC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link,address,undefined -c -o $@ $<
FUZZ_OBJ := $(FUZZ_SHARED:%.c=build-fuzz/obj/%.o)
.SECONDARY: $(FUZZ_OBJ) # kept between builds: they are what makes the next one quick
build-fuzz/libfuzzshared.a: $(FUZZ_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

build-fuzz/%: tests/fuzz/%.c build-fuzz/libfuzzshared.a $(wildcard tests/fuzz/*.h) $(wildcard */*.h)
	@mkdir -p build-fuzz
	@[ "$(V)" = 1 ] || echo "  FUZZLD  $@"
	$(Q)$(FUZZCC) $(FUZZ_FLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< \
		$(filter %.c,$(filter-out $<,$^)) build-fuzz/libfuzzshared.a $(PKG_LIBS)

# The report's reader and renderers, for fuzz_report (outside the shared list: they
# are report/ code).
build-fuzz/fuzz_report: report/report.c report/report_fmt.c report/report.h tests/unit/report_check.h
# What origin servers and the upstream proxy send back (proxy/ code outside the
# shared list: resp.c and upstream_answer.c need proxy_int.h, not the event loop).
build-fuzz/fuzz_resp: proxy/resp.c
build-fuzz/fuzz_upstream_answer: proxy/resp.c proxy/upstream_answer.c
# The decider's answer parser (events/ code).
build-fuzz/fuzz_learn: learn/record.c learn/propose.c learn/emit.c learn/diff.c learn/learn.h
build-fuzz/fuzz_decider: events/decider_parse.c events/decider_int.h
# The creation broker's request path (the gate's parse half, with the table and the
# emulation it dispatches to).
build-fuzz/fuzz_broker: $(wildcard linux/broker*.c linux/broker*.h) linux/die.c linux/paths.c linux/procstat.c
# The registry-value scrubbers of the command's environment (runner/ code too).
build-fuzz/fuzz_env_scrub: env/env_scrub.c env/env.h
# `halo-run proxy`'s client credentials and listen/LISTEN_FDS/token parsers
build-fuzz/fuzz_proxy_auth: proxy/auth.c runner/proxy_listen.c runner/proxy_cmd.h
# The refusals' log parser (netns/ code, outside the shared list: Linux only).
build-fuzz/fuzz_explain: netns/explain.c netns/netns.h

fuzz: $(FUZZ_BIN)
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); mkdir -p tests/fuzz/corpus-$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 tests/fuzz/corpus-$$n tests/fuzz/seeds/$${n#fuzz_} || exit 1; done

# One target a job (`make -j2 fuzz-smoke`: two at a time), each with the same runs; the
# longest first (seconds for 20000 runs, twice the default: learn 19, oneoff 18, import 10, shell 9,
# managed 9, yaml 5, the rest 3 or less), so that the pool does not end on one of them.
FUZZ_SLOW  := fuzz_learn fuzz_oneoff fuzz_import fuzz_shell fuzz_managed fuzz_yaml
FUZZ_SMOKE := $(addprefix smoke-,$(filter $(FUZZ_BIN:build-fuzz/%=%),$(FUZZ_SLOW))) \
	$(addprefix smoke-,$(filter-out $(FUZZ_SLOW),$(FUZZ_BIN:build-fuzz/%=%)))
.PHONY: $(FUZZ_SMOKE)
fuzz-smoke: $(FUZZ_SMOKE)
$(FUZZ_SMOKE): smoke-%: build-fuzz/%
	@echo "fuzz-smoke: $* ($(SMOKE_RUNS) runs)"; \
	rm -rf build-fuzz/smoke-$*; mkdir -p build-fuzz/smoke-$*; \
	$< -runs=$(SMOKE_RUNS) -seed=1 -max_len=4096 build-fuzz/smoke-$* tests/fuzz/seeds/$(*:fuzz_%=%) >/dev/null 2>build-fuzz/$*.log || \
		{ tail -40 build-fuzz/$*.log; exit 1; }

bench: all deps-bench
	@for b in tests/bench/*; do [ -x $$b ] && [ ! -d $$b ] && { echo "== $$b"; $$b $(abspath $(BUILD)) || exit 1; }; done; true

# The man pages, made from the user docs (README.md's usage, options and exit codes;
# docs/policy.md whole) by tools/mkman.py: no second copy to keep in sync.
man: $(MAN)
$(MAN) &: tools/mkman.py README.md docs/policy.md runner/cli.c
	@mkdir -p $(BUILD)/man
	$(Q)python3 tools/mkman.py $(VERSION) README.md docs/policy.md $(BUILD)/man

install: $(BIN) $(MAN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/halo-run
	for l in $(HALO_LINKS); do ln -sf halo-run $(DESTDIR)$(PREFIX)/bin/$$l; done
	install -m 0644 $(BUILD)/man/halo-run.1 $(DESTDIR)$(MANDIR)/man1/halo-run.1
	install -m 0644 $(BUILD)/man/halo-run-policy.5 $(DESTDIR)$(MANDIR)/man5/halo-run-policy.5
	install -d $(DESTDIR)$(PREFIX)/share/halo-run
	install -m 0755 contrib/ci/halo-ci.sh $(DESTDIR)$(PREFIX)/share/halo-run/halo-ci.sh

# The Debian package (dpkg-deb; see tools/mkdeb.sh and packaging/): $(BUILD)/halo-run_*.deb.
deb: $(BIN) $(MAN)
	@DEB_DLOPEN="$(if $(SSL_LAZY),$(SSL_LIBDIR)/libssl.so.3) $(if $(CJSON_LAZY),$(CJSON_LIBDIR)/libcjson.so.1)" tools/mkdeb.sh $(BUILD) $(VERSION) "$(HALO_LINKS)"

# The package, tested: lintian, then installed with apt-get into a fresh Debian 12
# root (debootstrap, minutes and network to the Debian archive) where `halo-run verify`
# runs as root and as an unprivileged user. Not part of `make check`.
check-deb: deb
	tests/pkg/t_deb.sh $(abspath $(BUILD))

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-fuzz

# Thin wrapper over meson for the README's commands.
#   make deps     install the Debian 12 build dependencies (needs root)
#   make          build into ./build
#   make example  build and diagnose the bundled example incident
#   make test     run the whole test suite
#   make asan     run the suite under AddressSanitizer + UBSan (./build-asan)
#   make valgrind run the golden CLI tests under valgrind memcheck

DEPS = build-essential meson ninja-build pkg-config python3 \
       libvectorscan-dev libpcre2-dev libjansson-dev libarchive-dev libcmocka-dev

BUILD ?= build

.PHONY: all deps build example test asan valgrind clean

all: build

deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS)

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dwerror=true

build: $(BUILD)/build.ninja
	ninja -C $(BUILD)

example: build
	./$(BUILD)/culprit diagnose examples/incident || test $$? -eq 1

test: build
	meson test -C $(BUILD) --print-errorlogs

asan:
	test -f build-asan/build.ninja || meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-fno-sanitize-recover=all
	ninja -C build-asan
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C build-asan --print-errorlogs

valgrind: build
	CULPRIT_CACHE_DIR=$(CURDIR)/$(BUILD)/cache CULPRIT_PCRE2_NO_JIT=1 CULPRIT_VALGRIND=1 CULPRIT_BIN=$(CURDIR)/$(BUILD)/culprit bash tests/cli/run_golden.sh

clean:
	rm -rf $(BUILD) build-asan

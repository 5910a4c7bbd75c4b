# The two commands a newcomer needs (`make demo`, `make test`) and a few more.
# Each installs missing Debian packages, configures and builds as needed.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: all deps configure build build-all demo test sanitize sanitize-address sanitize-address-build \
  sanitize-address-tests sanitize-thread sanitize-thread-build sanitize-thread-tests fuzz fuzz-build fuzz-run bench clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja

configure: $(BUILD)/build.ninja

# `crh` alone: what `make demo` runs. `make test` builds the rest (the tests and their servers).
build: deps configure
	cmake --build $(BUILD) -j $(JOBS) --target crh

# Everything: crh, the tests and their servers (what `make test` runs).
build-all: build
	cmake --build $(BUILD) -j $(JOBS)

# The main job: the nightly run (every contract suite, the slow ones too, the
# race and the mixed load, the report) on the embedded reference service.
demo: build
	$(BUILD)/crh run --slow --minute-ms 1000 --load-duration 5 --html report.html --json result.json --junit junit.xml

test: build-all
	@scripts/install-test-tools.sh   # node and the pinned npm validator of tests/deploy
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The tests again under AddressSanitizer+UBSan (clang: it compiles this
# instrumentation about 3.5x faster than gcc) and under ThreadSanitizer (gcc).
# The ASan+UBSan build is also the one without precompiled headers or unity
# batches for the product (clang), so a product file's missing #include fails
# there; its test files go in batches of six (CRH_UNITY_TESTS), which halves
# their compile time on this first step, alone on both cores. Both with line tables
# only (-g1): what the sanitizers' reports need (a file and line per frame).
# ASan+UBSan at -O0: clang compiled it in 1,214 s of CPU instead of 1,819 s at
# -O1, and its tests ran 425 s instead of 301 s; in CI the step took 902 s
# instead of 1,209 s (README, Build time and CI time). TSan stays at -O1: gcc's
# -Og compiled four sample files only 10-25% faster (gcc cannot use the
# precompiled header at -O0), and TSan's tests are the slowest already.
# The statistical experiments are left out under the sanitizers: they repeat
# code the other tests already run there (a sanitizer does not change a
# coverage or a false-alarm rate), and they are the slowest tests there; so
# are the tag ledger's three simulations over hundreds of seeds (17 s each
# under ASan; its ten other tests run the same code there), and the paired
# comparison's coverage and A/A simulations (14 s under ASan). So
# are the 10,000 sequences of `crh contract --explore` from the command line
# (the in-process exploration tests run the same code there) and the browser
# opening the pages (Chromium, not crh, is what runs), and the 76 contract
# runs of every fault mode and mutant behind the reproducer scripts (the
# contract tests run the same checks there; what is judged is sh and curl).
ASAN_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -g1 -DNDEBUG" -DCRH_UNITY_TESTS=ON
TSAN_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
SANITIZE_UNIT_EXCLUDE = PercentileIntervalCoverage.*:PairedShift.CoversTheTrueShiftAsOftenAsItSaysOnKnownDistributions:JudgePairs.TwoIdenticalTargetsSeldomRegressAndATenPercentSlowdownIsFlagged:Explore.TheHealthyReferenceNeverDivergesOverManySeeds:TagLedger.ACorrectTargetNeverMakesAViolationWhateverTheInterleaving:TagLedger.TagsTheTargetRunsAfterTheLoadGaveUpOnThemMakeNoViolation:TagLedger.ATargetThatNeverTagsAnAliasAgainIsCaughtEveryTime
SANITIZE_EXCLUDE = ^(cli[.]zoo_slice|cli[.]reproducers|bench[.]gate_false_alarms_bounded|cli[.]explore|reports[.]browser|(house|build|deploy)[.].*)$$
# Under the sanitizers the unit tests run a binary at a time
# (scripts/run-unit-tests.sh: a process per test cost ~85 ms each there), and
# ctest runs the rest: the command-line tests, named part.name in lower case.
SANITIZE_CTEST = ^[a-z]+[.]
# TSan looks for data races: besides every unit test, it runs the command-line
# tests where crh's threads meet (loads, shards, capture, SIP, signals, hostile
# peers). The one-client-at-a-time runs (contract verdicts, dialects, goldens,
# rate limits, first-day mistakes, reports, pcap reading, the SIP peers' interop) run under ASan
# and in make test; their shared code runs under TSan in the unit tests.
TSAN_EXCLUDE = ^(cli[.](contract|verdicts|dialect|golden|throttle|mistakes|run|nights|pcap|demo_script)|sip[.](capture|sipp_uac|kamailio_proxy|loss))$$
sanitize: sanitize-address sanitize-thread

# Each of these is also two targets, -build and -tests (and fuzz-build,
# fuzz-run), so that .ci/run can build the next one while tests run.
sanitize-address: sanitize-address-build
	$(MAKE) sanitize-address-tests

sanitize-address-build: deps
	CC=clang CXX=clang++ cmake -S . -B $(BUILD)-asan -G Ninja -DCRH_SANITIZE=address,undefined $(ASAN_FLAGS)
	cmake --build $(BUILD)-asan -j $(JOBS)

sanitize-address-tests:
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 bash scripts/run-unit-tests.sh $(BUILD)-asan '$(SANITIZE_UNIT_EXCLUDE)'
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest --test-dir $(BUILD)-asan --output-on-failure -j $(JOBS) -R '$(SANITIZE_CTEST)' -E '$(SANITIZE_EXCLUDE)'

sanitize-thread: sanitize-thread-build
	$(MAKE) sanitize-thread-tests

sanitize-thread-build: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja -DCRH_SANITIZE=thread $(TSAN_FLAGS)
	cmake --build $(BUILD)-tsan -j $(JOBS)

sanitize-thread-tests:
	TSAN_OPTIONS=halt_on_error=1 bash scripts/run-unit-tests.sh $(BUILD)-tsan '$(SANITIZE_UNIT_EXCLUDE)'
	TSAN_OPTIONS=halt_on_error=1 ctest --test-dir $(BUILD)-tsan --output-on-failure -j $(JOBS) -R '$(SANITIZE_CTEST)' -E '$(SANITIZE_EXCLUDE)|$(TSAN_EXCLUDE)'

# libFuzzer targets (clang) for the HTTP/1 readers of core/http1 and the
# reference service's request handling, each run FUZZ_SECONDS on its seeds.
FUZZ_SECONDS ?= 60
fuzz: fuzz-build
	$(MAKE) fuzz-run

fuzz-build: deps
	CC=clang CXX=clang++ cmake -S . -B $(BUILD)-fuzz -G Ninja -DCRH_BUILD_FUZZ=ON -DCRH_BUILD_TESTS=OFF
	cmake --build $(BUILD)-fuzz --target crh_fuzz -j $(JOBS)

fuzz-run:
	scripts/run-fuzz.sh $(BUILD)-fuzz $(FUZZ_SECONDS) $(JOBS)

# Micro-benchmarks (Release build in $(BUILD)-bench), then crh serve vs nginx, crh load vs wrk,
# its memory, 2 shards vs one process, and (as root) crh pcap check vs tshark and what --capture costs a load.
bench: build
	cmake -S . -B $(BUILD)-bench -G Ninja -DCRH_BUILD_BENCH=ON -DCRH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD)-bench --target crh_micro_bench -j $(JOBS)
	$(BUILD)-bench/bench/micro/crh_micro_bench
	@bench/serve_vs_nginx.sh $(BUILD)/crh
	@bench/load_vs_wrk.sh $(BUILD)/crh
	@bench/load_memory.sh $(BUILD)/crh
	@bench/shard_split.sh $(BUILD)/crh
	@if [ "$$(id -u)" = 0 ]; then bench/pcap_vs_tshark.sh $(BUILD)/crh && bench/capture_overhead.sh $(BUILD)/crh; \
	else echo "bench: pcap_vs_tshark.sh and capture_overhead.sh capture packets and need root: skipped"; fi

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-bench $(BUILD)-fuzz

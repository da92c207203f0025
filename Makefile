# kgroup: the one entry point. `make run` and `make test` work on a fresh machine: they make
# the virtualenv, install what is missing, build the extension in release mode, then run.

SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
STAMPS := .stamps
RUST_SRC := $(shell find rust -name '*.rs') Cargo.toml pyproject.toml
export VIRTUAL_ENV := $(VENV)
export PATH := $(VENV)/bin:$(PATH)
# Spark's Python workers must run the virtualenv's interpreter, which has kgroup installed.
export PYSPARK_PYTHON := $(PY)
export PYSPARK_DRIVER_PYTHON := $(PY)

# What `make lint` and `make fmt` check and format: every Python tree of the repository.
PY_PATHS := python tests bench spark_udfs scripts examples pyspark_kgroup.py

.PHONY: run test test-rust test-python test-example test-spark-compat test-compat bench bench-kafka lint fmt \
	build build-bench venv clean fuzz kafka-ref generate bench-848 bench-testing \
	test-compat-security bench-tls bench-abuse

# The story, end to end (spark_udfs/demo): kgroup's broker in the background, Spark writing a
# keyed sample to it, a consumer group reading it while a member leaves and comes back, every
# count checked. RUN_ARGS passes options: make run RUN_ARGS="--rows 1000000 --keep demo-out"
RUN_ARGS ?=
run: build
	$(PY) -m spark_udfs.demo $(RUN_ARGS)

test: test-rust test-python test-example

test-rust:
	cargo test --release --quiet

test-python: build kafka-ref
	$(PY) -m pytest -q tests

# The example project (examples/orders-service, a service tested with kgroup.testing) run as a
# user runs it: kgroup's wheel built afresh, a clean virtualenv, pip install of the wheel and of
# a copy of the example (the working tree stays clean), then pytest, whose kgroup_broker
# fixture comes from the wheel's pytest11 entry point.
EXAMPLE_DIR := $(or $(TMPDIR),/tmp)/kgroup-example
test-example: $(STAMPS)/venv
	rm -rf $(EXAMPLE_DIR) && mkdir -p $(EXAMPLE_DIR)
	$(VENV)/bin/maturin build --release --quiet --out $(EXAMPLE_DIR)/wheels
	cp -r examples/orders-service $(EXAMPLE_DIR)/orders-service
	$(PYTHON) -m venv $(EXAMPLE_DIR)/venv
	cd $(EXAMPLE_DIR) && env -u VIRTUAL_ENV venv/bin/python -m pip install --quiet \
		wheels/kgroup-*.whl './orders-service[test]'
	cd $(EXAMPLE_DIR)/orders-service && env -u VIRTUAL_ENV ../venv/bin/python -m pytest -q \
		-p no:cacheprovider

# Apache Kafka beside kgroup (tests/support/apache_kafka.py): Java and Maven from Debian when the
# machine lacks them, then Kafka's jars from Maven Central into ~/.cache/kgroup, once, and the
# two jars of Kafka 3.9 whose message specs scripts/check_protocol_spec.py compares with.
kafka-ref: $(STAMPS)/kafka-ref

$(STAMPS)/kafka-ref: tests/support/kafka_ref/pom.xml tests/support/kafka_ref/specs-pom.xml \
		tests/support/apache_kafka.py $(STAMPS)/venv
	command -v javac >/dev/null && command -v mvn >/dev/null || { apt-get update -q && \
		apt-get install -y -q --no-install-recommends openjdk-17-jdk-headless maven; }
	cd tests && $(PY) -c 'from support.apache_kafka import lib_dir; print("Apache Kafka jars:", lib_dir())'
	cd tests && $(PY) -c 'from support.apache_kafka import spec_jars; print("Kafka 3.9 specs:", spec_jars())'
	@touch $@

# librdkafka's own integration tests (v2.15.0's C test programs) against a kgroup broker that
# scripts/librdkafka/run.py starts, with Kafka's default group settings and with
# group.initial.rebalance.delay.ms=0: over an hour, so not in `make test` nor .ci/run.
# RDK_SRC: the built source tree (scripts/librdkafka/README.md); COMPAT_TESTS: some programs only;
# PROTOCOL=consumer: the group programs with KIP-848's consumer protocol (consumer.txt), delay 0.
RDK_SRC ?= $(or $(TMPDIR),/tmp)/rdk/src
COMPAT_TESTS ?=
PROTOCOL ?= classic
test-compat: build kafka-ref
	RDK_SRC=$(RDK_SRC) COMPAT_TESTS="$(COMPAT_TESTS)" $(PY) scripts/librdkafka/run.py \
		--protocol $(PROTOCOL)

# librdkafka's programs that need a secured broker (ACLs, SSL, SASL), one broker per mode.
test-compat-security: build kafka-ref
	for mode in acl ssl sasl-plain sasl-scram; do \
		RDK_SRC=$(RDK_SRC) $(PY) scripts/librdkafka/run.py --security $$mode || exit 1; \
	done

# tests/spark on an older Spark than .venv's: by default the newest 4.0 release, the oldest that
# pyproject's [spark] extra allows (`make test-spark-compat SPARK=4.1` for another). Its own
# virtualenv, from .venv's interpreter, so that the kgroup built for .venv imports there as is.
SPARK ?= 4.0
SPARK_VENV := $(CURDIR)/.venv-spark$(SPARK)
SPARK_PY := $(SPARK_VENV)/bin/python

test-spark-compat: $(STAMPS)/venv-spark$(SPARK) $(STAMPS)/build
	PYSPARK_PYTHON=$(SPARK_PY) PYSPARK_DRIVER_PYTHON=$(SPARK_PY) VIRTUAL_ENV=$(SPARK_VENV) \
		PATH=$(SPARK_VENV)/bin:$$PATH $(SPARK_PY) -m pytest -q tests/spark

$(STAMPS)/venv-spark$(SPARK): requirements/spark-compat.txt $(STAMPS)/venv
	test -x $(SPARK_PY) || $(PY) -m venv $(SPARK_VENV)
	$(SPARK_PY) -m pip install --quiet --upgrade pip
	$(SPARK_PY) -m pip install --quiet -r requirements/spark-compat.txt "pyspark==$(SPARK).*"
	$(SPARK_PY) -c 'import pathlib, sys, sysconfig; pathlib.Path(sysconfig.get_path("purelib"), \
		"kgroup.pth").write_text(sys.argv[1] + "\n")' $(CURDIR)/python
	@touch $@

# Benchmarks need the `bench` feature's hooks (never in the shipped module): a build of its own.
bench: build-bench kafka-ref
	cargo bench --features bench --bench hash_loop
	cargo bench --bench group_heartbeats
	$(PY) -m pytest -q bench -o python_files='bench_*.py' -p no:cacheprovider --benchmark-only --benchmark-columns=min,median,mean,ops,rounds \
		--benchmark-sort=name

# kgroup beside Apache Kafka and tansu (issue 18) at the sizes of the real figures, one run:
# start-up and memory, produce/consume, groups, Spark with 10,000,000 rows. For a quiet machine
# (bench/README.md); the load average prints before, after and in every summary.
BENCH_KAFKA := bench/bench_startup.py bench/bench_broker.py bench/bench_groups.py \
	bench/bench_spark_kafka.py
bench-kafka: build kafka-ref
	uptime
	KGROUP_BENCH_SPARK_ROWS=$${KGROUP_BENCH_SPARK_ROWS:-10000000} $(PY) -m pytest -q \
		$(BENCH_KAFKA) -o python_files='bench_*.py' -p no:cacheprovider --benchmark-only \
		--benchmark-columns=min,median,rounds --benchmark-sort=name
	uptime

# KIP-848's consumer protocol beside the classic one, kgroup beside Apache Kafka 4.4 (issue 21's
# benchmarks, bench/bench_consumer_protocol.py), one run; the load average prints around it.
bench-848: build kafka-ref
	uptime
	$(PY) -m pytest -q bench/bench_consumer_protocol.py -o python_files='bench_*.py' \
		-p no:cacheprovider --benchmark-only --benchmark-columns=min,median,rounds \
		--benchmark-sort=name
	uptime

# kgroup.testing (issue 23's benchmarks, bench/bench_testing.py), one run: a test broker's start
# and idle memory beside Apache Kafka 4.4's, and 200 produce-and-consume tests with a broker per
# test against one shared Kafka; the load average prints around it.
bench-testing: build kafka-ref
	uptime
	$(PY) -m pytest -q bench/bench_testing.py -o python_files='bench_*.py' -p no:cacheprovider \
		--benchmark-only --benchmark-columns=min,median,rounds --benchmark-sort=name
	uptime

# What TLS costs: produce, consume and acks=all latency over SSL and SASL_SSL against PLAINTEXT,
# kgroup beside Apache Kafka (issue 24, bench/bench_tls.py), one run; the load average prints
# with it. Then the TLS layer's receive cost alone (bench/bench_tls_layer.py), steadier.
bench-tls: build kafka-ref
	uptime
	$(PY) -m pytest -q bench/bench_tls.py -o python_files='bench_*.py' -p no:cacheprovider \
		--benchmark-only --benchmark-columns=min,rounds
	$(PY) bench/bench_tls_layer.py
	uptime

# The broker under abuse (issue 24, bench/bench_abuse.py), one run: a real producer and consumer
# timed beside 10,000 held connections, 10,000 stalled frames, huge claims, random bytes and an
# ApiVersions flood, and the broker's memory before, during and after.
bench-abuse: build
	uptime
	$(PY) -m pytest -q bench/bench_abuse.py -o python_files='bench_*.py' -p no:cacheprovider \
		--benchmark-only --benchmark-columns=min,rounds
	uptime

lint: build
	cargo fmt --check
	cargo clippy --all-targets --all-features --quiet -- -D warnings
	$(VENV)/bin/ruff check $(PY_PATHS)
	$(VENV)/bin/ruff format --check $(PY_PATHS)
	$(PY) -m mypy.stubtest kgroup._native --allowlist stubtest-allowlist.txt
	$(PY) -m mypy

fmt: venv
	cargo fmt
	$(VENV)/bin/ruff format $(PY_PATHS)
	$(VENV)/bin/ruff check --fix $(PY_PATHS)

venv: $(STAMPS)/venv

$(STAMPS)/venv: requirements/dev.txt
	@mkdir -p $(STAMPS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	@touch $@

build: $(STAMPS)/build

# One extension is installed at a time: the shipped one (build) or the one with the benchmark
# hooks (build-bench). Each stamp removes the other's, so switching rebuilds.
$(STAMPS)/build: $(STAMPS)/venv $(RUST_SRC)
	$(VENV)/bin/maturin develop --release --quiet
	@rm -f $(STAMPS)/build-bench
	@touch $@

build-bench: $(STAMPS)/build-bench

$(STAMPS)/build-bench: $(STAMPS)/venv $(RUST_SRC)
	$(VENV)/bin/maturin develop --release --quiet --features python,bench
	@rm -f $(STAMPS)/build
	@touch $@

# The typed messages (rust/protocol/typed/) written again from the declarations of
# rust/protocol/messages/; `cargo test` fails while they differ.
generate:
	KGROUP_GENERATE=1 cargo test --quiet --lib generated_code_is_current

# Fuzzing (cargo-fuzz, nightly; not part of CI): FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 600
fuzz:
	cd fuzz && cargo run --release --quiet --bin seed
	cd fuzz && cargo +nightly fuzz run -O request_decode -- -max_total_time=$(FUZZ_SECONDS)
	cd fuzz && cargo +nightly fuzz run -O response_decode -- -max_total_time=$(FUZZ_SECONDS)
	cd fuzz && cargo +nightly fuzz run -O record_batches -- -max_total_time=$(FUZZ_SECONDS)
	cd fuzz && cargo +nightly fuzz run -O typed_decode -- -max_total_time=$(FUZZ_SECONDS)

clean:
	rm -rf $(STAMPS) target python/kgroup/*.so

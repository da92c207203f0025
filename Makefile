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

.PHONY: run test test-rust test-python bench lint fmt build venv clean fuzz

run: build
	$(PY) -m kgroup.cli partition --sample 1000000 --partitions 12 --summary
	$(PY) -m spark_udfs.demo --rows 1000000 --partitions 12

test: test-rust test-python

test-rust:
	cargo test --release --quiet

test-python: build
	$(PY) -m pytest -q tests

bench: build
	cargo bench --bench hash_loop
	$(PY) -m pytest -q bench -o python_files='bench_*.py' -p no:cacheprovider --benchmark-only --benchmark-columns=min,median,mean,ops,rounds \
		--benchmark-sort=name

lint: build
	cargo fmt --check
	cargo clippy --all-targets --features python --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests bench spark_udfs scripts
	$(VENV)/bin/ruff format --check python tests bench spark_udfs scripts
	$(PY) -m mypy.stubtest kgroup._native --allowlist stubtest-allowlist.txt

fmt: venv
	cargo fmt
	$(VENV)/bin/ruff format python tests bench
	$(VENV)/bin/ruff check --fix python tests bench

venv: $(STAMPS)/venv

$(STAMPS)/venv: requirements/dev.txt
	@mkdir -p $(STAMPS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	@touch $@

build: $(STAMPS)/build

$(STAMPS)/build: $(STAMPS)/venv $(RUST_SRC)
	$(VENV)/bin/maturin develop --release --quiet
	@touch $@

# Fuzzing (cargo-fuzz, nightly; not part of CI): FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 600
fuzz:
	cd fuzz && cargo run --release --quiet --bin seed
	cd fuzz && cargo +nightly fuzz run -O request_decode -- -max_total_time=$(FUZZ_SECONDS)
	cd fuzz && cargo +nightly fuzz run -O response_decode -- -max_total_time=$(FUZZ_SECONDS)
	cd fuzz && cargo +nightly fuzz run -O record_batches -- -max_total_time=$(FUZZ_SECONDS)

clean:
	rm -rf $(STAMPS) target python/kgroup/*.so

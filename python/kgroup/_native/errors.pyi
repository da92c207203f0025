# Typed stubs of kgroup._native.errors, built from rust/py/errors.rs;
# `make lint` checks them against the built module (mypy.stubtest).
# Users import kgroup.errors.

#: Kafka's error codes: (code, name, class name, retriable, message), in code order.
ERROR_CODES: list[tuple[int, str, str, bool, str]]

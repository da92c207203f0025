# Typed stubs of kgroup._native.errors (rust/py/errors.rs), checked against the built module by
# `make lint` (mypy.stubtest). Users import kgroup.errors.

#: Kafka's error codes: (code, name, class name, retriable, message), in code order.
ERROR_CODES: list[tuple[int, str, str, bool, str]]

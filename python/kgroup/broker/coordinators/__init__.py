"""The coordinators the broker hosts, as Kafka 4.x splits them: one shared runtime and one module
per coordinator kind.

- ``runtime``: :class:`~kgroup.broker.coordinators.runtime.CoordinatorRuntime`, what every
  coordinator needs whatever its kind: its effects carried out (responses, records appended to
  its internal topic), its timers, the load and unload of its internal topic's partitions.
- ``groups``: :class:`~kgroup.broker.coordinators.groups.GroupHost`, the classic consumer groups
  (``__consumer_offsets``).

The coordinators themselves are Rust state machines (``kgroup.group``): time passed in, effects
out. A module here gives its coordinator a runtime and adds its kind's own calls.
"""

"""Dynamic broker configs (Kafka's KIP-226, ``DynamicBrokerConfig``): the broker configs
AlterConfigs and IncrementalAlterConfigs may change at run time, for this broker (resource
name: its node id) or as the cluster's default (resource name ""), which win over
``server.properties`` (this broker's over the cluster's).

Which keys are dynamic is Kafka 4.1's ``AllDynamicConfigs``: the first broker synonym of each
topic config (``log.retention.ms``, not ``log.retention.hours``), the log cleaner's tuning,
thread pools, metric reporters, listener, TLS and SASL settings, connection limits, producer
state expiry and remote storage tuning. Listener, TLS and SASL settings are per broker only,
and the TLS key and trust stores only with a ``listener.name.<listener>.`` prefix. A change
is checked whole, as Kafka's ``DynamicBrokerConfig.validateConfigs`` checks it: a static
config, a store without its listener prefix, a bad value, a per-broker config set as the
cluster's default, or a thread pool more than halved or doubled are INVALID_REQUEST. Keys the
broker does not know are kept as custom configs, as Kafka keeps them.

Kept durably in ``broker-configs.json`` of the metadata folder (Kafka keeps them in its
metadata log), by resource name. kgroup reads the value where it reads the config: the
topic configs' broker synonyms take effect at once on every topic without its own override,
the others when next read. Several (thread pools, Kerberos, metric reporters, the log
cleaner's buffers, TLS and listener settings, which kgroup reads at start) have no effect.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.config import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigError, ConfigType
from kgroup.log import file_exists, read_text, write_atomically

if TYPE_CHECKING:
    from kgroup.broker.config import BrokerConfig

FILE = "broker-configs.json"

#: SSL_STORE_CONFIGS are Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only per listener.
SSL_STORE_CONFIGS = frozenset(
    {
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.truststore.certificates",
    }
)
#: LISTENER_CONFIGS are Kafka's DynamicListenerConfig.ReconfigurableConfigs.
LISTENER_CONFIGS = frozenset(
    {
        "listeners",
        "listener.security.protocol.map",
        "principal.builder.class",
        "ssl.protocol",
        "ssl.provider",
        "ssl.cipher.suites",
        "ssl.enabled.protocols",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.endpoint.identification.algorithm",
        "ssl.secure.random.implementation",
        "ssl.client.auth",
        "ssl.engine.factory.class",
        "sasl.mechanism.inter.broker.protocol",
        "sasl.jaas.config",
        "sasl.enabled.mechanisms",
        "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        "max.connections",
        "max.connection.creation.rate",
        "num.network.threads",
    }
)
#: CLUSTER_LEVEL_LISTENER_CONFIGS are the listener configs that may be cluster defaults too.
CLUSTER_LEVEL_LISTENER_CONFIGS = frozenset(
    {"max.connections", "max.connection.creation.rate", "num.network.threads"}
)
#: SOCKET_SERVER_CONFIGS are the connection limits the acceptors read (SocketServer's
#: ReconfigurableConfigs and the listener ones): a change applies at once.
SOCKET_SERVER_CONFIGS = frozenset(
    {
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "max.connections",
        "max.connection.creation.rate",
    }
)
#: THREAD_POOL_CONFIGS are Kafka's DynamicThreadPool.RECONFIGURABLE_CONFIGS.
THREAD_POOL_CONFIGS = frozenset(
    {
        "num.io.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
        "background.threads",
    }
)
#: LOG_CONFIGS are the broker synonyms of topic configs that are dynamic: the first of each.
LOG_CONFIGS = frozenset(spec.synonyms[0][0] for spec in TOPIC_CONFIGS.values() if spec.synonyms)
#: DYNAMIC_CONFIGS are Kafka's DynamicBrokerConfig.AllDynamicConfigs.
DYNAMIC_CONFIGS = (
    SSL_STORE_CONFIGS
    | LISTENER_CONFIGS
    | THREAD_POOL_CONFIGS
    | LOG_CONFIGS
    | {
        # LogCleaner.RECONFIGURABLE_CONFIGS
        "log.cleaner.threads",
        "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.load.factor",
        "log.cleaner.io.buffer.size",
        "message.max.bytes",
        "log.cleaner.io.max.bytes.per.second",
        "log.cleaner.backoff.ms",
        "metric.reporters",
        # SocketServer.ReconfigurableConfigs
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "max.connections",
        "max.connection.creation.rate",
        # the producer state manager's
        "producer.id.expiration.ms",
        "transaction.partition.verification.enable",
        # DynamicRemoteLogConfig.ReconfigurableConfigs
        "remote.log.index.file.cache.total.size.bytes",
        "remote.fetch.max.wait.ms",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
        "remote.list.offsets.request.timeout.ms",
        "remote.log.manager.copier.thread.pool.size",
        "remote.log.manager.expiration.thread.pool.size",
        "remote.log.reader.threads",
    }
)
#: PER_BROKER_CONFIGS may not be set as the cluster's default.
PER_BROKER_CONFIGS = (SSL_STORE_CONFIGS | LISTENER_CONFIGS) - CLUSTER_LEVEL_LISTENER_CONFIGS
_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")


def _java_set(names: list[str]) -> str:
    # How Kafka 4.4's messages print a set of names (a java.util.Set; sorted here).
    return "[" + ", ".join(names) + "]"


def _reconfiguration_failed(why: str) -> errors.InvalidRequest:
    # Kafka wraps a reconfigurable's refusal in a ConfigException of its own.
    return errors.InvalidRequest(
        f"Invalid value org.apache.kafka.common.config.ConfigException: {why} for "
        "configuration Invalid dynamic configuration"
    )


def base_name(name: str) -> str:
    """A config's name without its ``listener.name.<listener>.`` prefix."""
    m = _LISTENER_CONFIG.fullmatch(name)
    return m.group(1) if m else name


def validate(config: BrokerConfig, props: Mapping[str, str], per_broker: bool) -> None:
    """Check a resource's whole set of dynamic configs as Kafka does
    (DynamicBrokerConfig.validateConfigs and its thread pools' validateReconfiguration);
    errors.InvalidRequest with Kafka's message when refused."""

    def refuse(names: list[str], why: str) -> None:
        if names:
            raise errors.InvalidRequest(f"{why}: {_java_set(sorted(names))}")

    refuse(
        [k for k in props if k in BROKER_CONFIGS and k not in DYNAMIC_CONFIGS],
        "Cannot update these configs dynamically",
    )
    refuse(
        [k for k in props if k in SSL_STORE_CONFIGS],
        "These security configs can be dynamically updated only per-listener using the "
        "listener prefix",
    )
    for name, raw in props.items():
        spec = BROKER_CONFIGS.get(base_name(name))
        if spec is not None:
            try:
                spec.parse(raw)
            except ConfigError as e:
                raise errors.InvalidRequest(str(e)) from None
    if not per_broker:
        refuse(
            [
                k
                for k in props
                if k in PER_BROKER_CONFIGS
                or (k != base_name(k) and base_name(k) not in CLUSTER_LEVEL_LISTENER_CONFIGS)
            ],
            "Cannot update these configs at default cluster level, broker id must be specified",
        )
    for name in sorted(THREAD_POOL_CONFIGS & props.keys()):
        new, old = int(BROKER_CONFIGS[name].parse(props[name])), int(config.get(name))
        if new == old:
            continue
        failed = f"Dynamic thread count update validation failed for {name}={new}"
        if new <= 0:
            raise _reconfiguration_failed(f"{failed}, value should be at least 1")
        if new < old // 2:
            raise _reconfiguration_failed(
                f"{failed}, value should be at least half the current value {old}"
            )
        if new > old * 2:
            raise _reconfiguration_failed(
                f"{failed}, value should not be greater than double the current value {old}"
            )


def check_resource_name(state: Any, name: str) -> None:
    """A broker resource names this broker, or "" for the cluster (Kafka's
    ConfigAdminManager.validateResourceNameIsCurrentNodeId); else INVALID_REQUEST. ``state``
    is the BrokerState, not imported here: kgroup.broker.state imports this module."""
    if not name:
        return
    try:
        node = int(name)
    except ValueError:
        raise errors.InvalidRequest(f"Node id must be an integer, but it is: {name}") from None
    if node != state.node_id:
        raise errors.InvalidRequest(
            f"Unexpected broker id, expected {state.node_id}, but received {name}"
        )


SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def incremental(
    current: Mapping[str, str], ops: list[tuple[str, int, str | None]]
) -> dict[str, str]:
    """A resource's dynamic configs after IncrementalAlterConfigs' operations (name, op,
    value), as Kafka's ConfigAdminManager.prepareIncrementalConfigs makes them: APPEND and
    SUBTRACT only on a list, starting from its default when unset."""
    out = dict(current)
    for name, op, value in ops:
        if op == SET:
            out[name] = value or ""
        elif op == DELETE:
            out.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            spec = BROKER_CONFIGS.get(name)
            if spec is None:
                raise errors.InvalidConfig(f"Unknown config name: {name}")
            verb = "append" if op == APPEND else "subtract"
            if spec.type is not ConfigType.LIST:
                raise errors.InvalidConfig(
                    f"Config value {verb} is not allowed for config key: {name}"
                )
            old = out.get(name)
            if old is None:
                old = ",".join(spec.default or [])
            items = [x for x in old.split(",") if x or op == SUBTRACT]
            given = (value or "").split(",")
            if op == APPEND:
                items += [x for x in given if x not in items]
            else:
                for x in given:
                    if x in items:
                        items.remove(x)
            out[name] = ",".join(items)
        else:
            raise errors.InvalidRequest(f"Unknown operations type {op}")
    return out


class DynamicConfigs:
    """DynamicConfigs keeps the dynamic broker configs in ``broker-configs.json`` of the
    metadata folder and hands them to the BrokerConfig, which every reader goes through."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self._path = config.data_dir / FILE
        #: by_resource holds each resource's configs, raw: "" the cluster's, "<id>" a broker's.
        self.by_resource: dict[str, dict[str, str]] = {}
        if file_exists(self._path):
            self.by_resource = json.loads(read_text(self._path))
        self._publish()

    def _publish(self) -> None:
        self.config.set_dynamic(
            self.by_resource.get(str(self.config.node_id), {}), self.by_resource.get("", {})
        )

    def get(self, name: str) -> dict[str, str]:
        """A resource's dynamic configs, raw."""
        return dict(self.by_resource.get(name, {}))

    def set(self, state: Any, name: str, props: Mapping[str, str], validate_only: bool) -> None:
        """Replace a resource's dynamic configs with ``props``, checked (see ``validate``),
        kept and applied: topics without their own override take a changed log config."""
        validate(self.config, props, per_broker=bool(name))
        # A TLS listener's new key store or trust store is read and checked before anything
        # is kept (Kafka's SslFactory.validateReconfiguration), and serves once it is.
        tls = getattr(state, "tls", None)
        remade: dict[str, Any] = {}
        if tls is not None:
            after = dict(self.by_resource, **{name: dict(props)})
            trial = copy.copy(self.config)
            trial.set_dynamic(after.get(str(self.config.node_id), {}), after.get("", {}))
            remade = tls.prepare(trial)
        if validate_only:
            return
        before = self.get(name)
        if props:
            self.by_resource[name] = dict(props)
        else:
            self.by_resource.pop(name, None)
        write_atomically(self._path, json.dumps(self.by_resource, indent=1, sort_keys=True))
        self._publish()
        if tls is not None:
            tls.commit(remade)
            if name:
                # An update of this broker's configs also reloads a store file that changed in
                # place (Kafka's reloadUpdatedFilesWithoutConfigChange).
                tls.reload_modified(self.config, skip=remade)
        changed = {k for k in before.keys() | props.keys() if before.get(k) != props.get(k)}
        if {base_name(k) for k in changed} & SOCKET_SERVER_CONFIGS:
            state.limits.quotas.reconfigure()
        if changed & (LOG_CONFIGS | {"producer.id.expiration.ms"}):
            topics = state.topics
            for topic in list(topics.by_name.values()):
                values = topics.log_config(topic.configs)
                for p in topic.partitions:
                    p.log.update_config(values)

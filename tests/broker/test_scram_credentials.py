"""SCRAM credentials (KIP-554): DescribeUserScramCredentials and AlterUserScramCredentials with
Kafka's validation and errors (ScramControlManager, ScramImage.describe), kept across a restart
in ``scram-credentials.json`` without the password, and kafka-configs.sh's SCRAM commands as
``kgroup configs``."""

from __future__ import annotations

import io
import json
import re

import confluent_kafka.admin as ck
import pytest
from support import sasl

from kgroup import errors
from kgroup.broker import Broker
from kgroup.cli import build_parser
from kgroup.client.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)


def upsert(user: str, iterations: int = 4096, mech=ScramMechanism.SCRAM_SHA_256):
    return UserScramCredentialUpsertion(user, ScramCredentialInfo(mech, iterations), "pw")


def results(admin: AdminClient, alterations: list) -> dict[str, type | None]:
    out: dict[str, type | None] = {}
    for user, f in admin.alter_user_scram_credentials(alterations).items():
        try:
            f.result(10)
            out[user] = None
        except errors.KafkaError as e:
            out[user] = type(e)
    return out


def test_alter_validation_as_kafkas_controller(tmp_path) -> None:
    with Broker(tmp_path) as b, AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
        got = results(
            admin,
            [
                upsert("few", 4095),
                upsert("many", 16385),
                upsert("ok", 16384),
                upsert("twice"),
                upsert("twice", mech=ScramMechanism.SCRAM_SHA_512),
                UserScramCredentialDeletion("missing", ScramMechanism.SCRAM_SHA_256),
                upsert("", 4096),
            ],
        )
        assert got == {
            "few": errors.UnacceptableCredential,
            "many": errors.UnacceptableCredential,
            "ok": None,
            "twice": errors.DuplicateResource,
            "missing": errors.ResourceNotFound,
            "": errors.UnacceptableCredential,
        }
        d = admin.describe_user_scram_credentials(["ok", "few"])
        assert d["ok"].result(10).scram_credential_infos == [
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 16384)
        ]
        with pytest.raises(errors.ResourceNotFound, match="does not exist: few"):
            d["few"].result(10)


def test_unknown_mechanism_is_unsupported(tmp_path) -> None:
    with Broker(tmp_path) as b, AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
        got = results(admin, [UserScramCredentialDeletion("u", ScramMechanism.UNKNOWN)])
        assert got == {"u": errors.UnsupportedSaslMechanism}


def test_confluent_kafka_admin_and_restart(tmp_path) -> None:
    with Broker(tmp_path) as b:
        admin = ck.AdminClient({"bootstrap.servers": b.bootstrap_servers})
        for f in admin.alter_user_scram_credentials(
            [
                ck.UserScramCredentialUpsertion(
                    "alice", ck.ScramCredentialInfo(ck.ScramMechanism.SCRAM_SHA_512, 8192), b"pw"
                )
            ]
        ).values():
            f.result(10)
        described = admin.describe_user_scram_credentials().result(10)
        info = described["alice"].scram_credential_infos[0]
        assert (info.mechanism, info.iterations) == (ck.ScramMechanism.SCRAM_SHA_512, 8192)
    stored = json.loads((tmp_path / "scram-credentials.json").read_text())
    cred = stored["users"]["alice"]["SCRAM-SHA-512"]
    assert set(cred) == {"salt", "stored_key", "server_key", "iterations"}
    # Read at start: the user authenticates after a restart.
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        **sasl.sasl_config(),
    }
    with Broker(tmp_path, config=config) as b:
        p = ck.AdminClient(
            sasl.client_config(b.address("SASL_PLAINTEXT"), "SCRAM-SHA-512", "alice", "pw")
        )
        assert p.list_topics(timeout=10).brokers


def kgroup(*argv: str) -> str:
    args = build_parser("configs").parse_args(["configs", *argv])
    out = io.StringIO()
    assert args.func(args, out) == 0
    return out.getvalue()


def test_kgroup_configs_as_kafka_configs_sh(tmp_path) -> None:
    with Broker(tmp_path) as b:
        bs = ["--bootstrap-server", b.bootstrap_servers]
        # One mechanism per call: Kafka's controller refuses a user altered twice in one
        # request (DUPLICATE_RESOURCE), so kafka-configs.sh with both fails on Kafka too.
        for config in (
            "SCRAM-SHA-256=[iterations=8192,password=alice-secret]",
            "SCRAM-SHA-512=[password=x]",
        ):
            out = kgroup(
                *bs,
                "--alter",
                "--add-config",
                config,
                "--entity-type",
                "users",
                "--entity-name",
                "alice",
            )
            assert out == "Completed updating config for user alice.\n"
        out = kgroup(*bs, "--describe", "--entity-type", "users", "--entity-name", "alice")
        assert out == (
            "SCRAM credential configs for user-principal 'alice' are "
            "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"
        )
        kgroup(*bs, "--alter", "--delete-config", "SCRAM-SHA-512", "--user", "alice")
        out = kgroup(*bs, "--describe", "--entity-type", "users")
        assert out == (
            "SCRAM credential configs for user-principal 'alice' are "
            "SCRAM-SHA-256=iterations=8192\n"
        )
        assert kgroup(*bs, "--describe", "--entity-type", "users", "--entity-name", "bob") == ""


def test_add_scram_at_start_as_kafka_storage_format(tmp_path) -> None:
    add = ["SCRAM-SHA-256=[name=alice,password=alice-secret,iterations=8192]"]
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        **sasl.sasl_config(),
    }
    with Broker(tmp_path, config=config, add_scram=add) as b:
        c = sasl.client_config(
            b.address("SASL_PLAINTEXT"), "SCRAM-SHA-256", "alice", "alice-secret"
        )
        assert ck.AdminClient(c).list_topics(timeout=10).brokers
        with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
            assert results(admin, [upsert("alice", 4096)]) == {"alice": None}
    # A credential changed since is kept at the next start.
    with Broker(tmp_path, add_scram=add) as b:
        with AdminClient({"bootstrap.servers": b.bootstrap_servers}) as admin:
            d = admin.describe_user_scram_credentials(["alice"])["alice"].result(10)
            assert d.scram_credential_infos[0].iterations == 4096


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "SCRAM-SHA-1=[name=a,password=b]",
            "The add-scram mechanism SCRAM-SHA-1 is not supported.",
        ),
        ("SCRAM-SHA-256=name=a", "Expected configuration string to start with ["),
        ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
        (
            "SCRAM-SHA-256=[name=a,password=b,iterations=10]",
            "The 'iterations' value must be >= 4096",
        ),
        ("SCRAM-SHA-256=[name=a,password=b,colour=red]", "Unknown SCRAM configurations: colour"),
    ],
)
def test_add_scram_errors_as_kafka(tmp_path, arg, message) -> None:
    from kgroup.broker.config import ConfigError

    with pytest.raises(ConfigError, match=re.escape(message)):
        Broker(tmp_path, add_scram=[arg])

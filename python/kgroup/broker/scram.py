"""SCRAM credentials (RFC 5802, RFC 7677), as Kafka's broker keeps them: for each user and
mechanism the salt, the stored key, the server key and the iteration count, never the password.

Kafka keeps them in its metadata log (UserScramCredentialRecord); kgroup keeps them in
``scram-credentials.json`` in the metadata folder (``config.data_dir``), written with
``kgroup.log.write_atomically`` on every change and read at start. Clients change them with
AlterUserScramCredentials (KIP-554), which sends the salt and the salted password; the keys are
derived here, as Kafka's controller derives them.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import os
from pathlib import Path

from kgroup.log import file_exists, read_text, write_atomically

__all__ = [
    "FILE",
    "MAX_ITERATIONS",
    "MECHANISMS",
    "MIN_ITERATIONS",
    "ScramCredential",
    "ScramCredentials",
    "credential",
    "parse_add_scram",
    "salted_password",
]

#: FILE is the credentials' file name in the metadata folder.
FILE = "scram-credentials.json"
#: MECHANISMS maps each SCRAM mechanism to its hash and Kafka's ScramMechanism type id (the
#: ``mechanism`` INT8 of Describe/AlterUserScramCredentials).
MECHANISMS: dict[str, tuple[str, int]] = {
    "SCRAM-SHA-256": ("sha256", 1),
    "SCRAM-SHA-512": ("sha512", 2),
}
#: MECHANISM_BY_TYPE is the mechanism of each type id.
MECHANISM_BY_TYPE = {t: name for name, (_, t) in MECHANISMS.items()}
#: MIN_ITERATIONS and MAX_ITERATIONS bound a credential's iterations (Kafka's ScramMechanism
#: minIterations; ScramControlManager refuses more than 16384).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


@dataclasses.dataclass(frozen=True)
class ScramCredential:
    """ScramCredential is what the server needs to check a SCRAM client (RFC 5802's
    StoredKey and ServerKey), without the password."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def salted_password(mechanism: str, password: bytes, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's SaltedPassword: Hi(password, salt, i), which is PBKDF2 with HMAC."""
    return hashlib.pbkdf2_hmac(MECHANISMS[mechanism][0], password, salt, iterations)


def credential(mechanism: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
    """The credential of a salted password (RFC 5802: StoredKey = H(HMAC(salted, "Client
    Key")), ServerKey = HMAC(salted, "Server Key"))."""
    algo = MECHANISMS[mechanism][0]
    client_key = hmac.digest(salted, b"Client Key", algo)
    return ScramCredential(
        salt=salt,
        stored_key=hashlib.new(algo, client_key).digest(),
        server_key=hmac.digest(salted, b"Server Key", algo),
        iterations=iterations,
    )


def from_password(mechanism: str, password: str, iterations: int) -> ScramCredential:
    """A new credential for ``password`` with a random salt (``kgroup configs`` and
    ``kafka-storage format --add-scram`` without a salt)."""
    salt = os.urandom(32)
    salted = salted_password(mechanism, password.encode(), salt, iterations)
    return credential(mechanism, salted, salt, iterations)


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


class ScramCredentials:
    """ScramCredentials holds every user's SCRAM credentials, by user then mechanism, and keeps
    them in ``path`` (None: memory only). Not thread-safe: the broker's loop owns it."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._users: dict[str, dict[str, ScramCredential]] = {}
        if path is not None and file_exists(path):
            data = json.loads(read_text(path))
            for user, mechs in data.get("users", {}).items():
                self._users[user] = {
                    mech: ScramCredential(
                        base64.b64decode(c["salt"]),
                        base64.b64decode(c["stored_key"]),
                        base64.b64decode(c["server_key"]),
                        int(c["iterations"]),
                    )
                    for mech, c in mechs.items()
                }

    def get(self, user: str, mechanism: str) -> ScramCredential | None:
        return self._users.get(user, {}).get(mechanism)

    def user(self, user: str) -> dict[str, ScramCredential]:
        """A user's credentials by mechanism (empty if none)."""
        return dict(self._users.get(user, {}))

    def users(self) -> list[str]:
        """The users with at least one credential, sorted."""
        return sorted(u for u, m in self._users.items() if m)

    def put(self, user: str, mechanism: str, cred: ScramCredential) -> None:
        self._users.setdefault(user, {})[mechanism] = cred

    def delete(self, user: str, mechanism: str) -> bool:
        """Remove a credential; False if there was none."""
        mechs = self._users.get(user)
        if not mechs or mechanism not in mechs:
            return False
        del mechs[mechanism]
        if not mechs:
            del self._users[user]
        return True

    def save(self) -> None:
        """Write every credential (atomically: a crash leaves the old file or the new)."""
        if self._path is None:
            return
        data = {
            "version": 1,
            "users": {
                user: {
                    mech: {
                        "salt": _b64(c.salt),
                        "stored_key": _b64(c.stored_key),
                        "server_key": _b64(c.server_key),
                        "iterations": c.iterations,
                    }
                    for mech, c in sorted(mechs.items())
                }
                for user, mechs in sorted(self._users.items())
            },
        }
        write_atomically(self._path, json.dumps(data, indent=1, sort_keys=True))


def parse_add_scram(text: str) -> tuple[str, str, ScramCredential]:
    """One ``--add-scram`` argument as kafka-storage format reads it
    (``SCRAM-SHA-256=[name=alice,password=alice-secret]``, optionally ``iterations``,
    ``salt`` and ``saltedpassword`` in base64): (mechanism, user, credential). ValueError with
    Kafka's ScramParser message when it cannot."""
    text = text.strip()
    mechanism, sep, rest = text.partition("=")
    if not sep:
        raise ValueError(f"Failed to find equals sign in SCRAM argument '{text}'")
    if mechanism not in MECHANISMS:
        raise ValueError(f"The add-scram mechanism {mechanism} is not supported.")
    if not rest.startswith("["):
        raise ValueError("Expected configuration string to start with [")
    if not rest.endswith("]"):
        raise ValueError("Expected configuration string to end with ]")
    parts: dict[str, str] = {}
    for component in rest[1:-1].split(","):
        key, sep, value = component.partition("=")
        if not sep:
            raise ValueError(f"No equals sign found in SCRAM component: {component}")
        if len(value) >= 2 and value.startswith('"') and value.endswith('"'):
            value = value[1:-1]
        parts[key] = value
    name = parts.pop("name", None)
    if name is None:
        raise ValueError("You must supply 'name' to add-scram")
    salt_text = parts.pop("salt", None)
    try:
        salt = base64.b64decode(salt_text, validate=True) if salt_text is not None else None
    except ValueError as e:
        raise ValueError(f"Failed to decode given salt: {salt_text}") from e
    iterations_text = parts.pop("iterations", None)
    try:
        iterations = int(iterations_text) if iterations_text is not None else MIN_ITERATIONS
    except ValueError as e:
        raise ValueError(f"Failed to parse iterations count: {iterations_text}") from e
    password = parts.pop("password", None)
    salted_text = parts.pop("saltedpassword", None)
    if password is None and salted_text is None:
        raise ValueError("You must supply one of 'password' or 'saltedpassword' to add-scram")
    if password is None and salt is None:
        raise ValueError("You must supply 'salt' with 'saltedpassword' to add-scram")
    if parts:
        raise ValueError(f"Unknown SCRAM configurations: {', '.join(sorted(parts))}")
    if iterations < MIN_ITERATIONS:
        raise ValueError(
            f"The 'iterations' value must be >= {MIN_ITERATIONS} for add-scram using {mechanism}"
        )
    if iterations > MAX_ITERATIONS:
        raise ValueError(
            f"The 'iterations' value must be <= {MAX_ITERATIONS} for add-scram using {mechanism}"
        )
    salt = salt if salt is not None else os.urandom(32)
    if password is not None:
        salted = salted_password(mechanism, password.encode(), salt, iterations)
    else:
        try:
            salted = base64.b64decode(str(salted_text), validate=True)
        except ValueError as e:
            raise ValueError(f"Failed to decode given saltedPassword: {salted_text}") from e
    return mechanism, name, credential(mechanism, salted, salt, iterations)

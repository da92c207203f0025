"""JAAS configuration strings, as Kafka's JaasConfig reads ``sasl.jaas.config``:
``<LoginModule class> <flag> key=value ...;``, values quoted or bare words, ``//`` and
``/* */`` comments. The broker reads its SASL users and options from them
(``kgroup.broker.sasl``), a client its username and password."""

from __future__ import annotations

import dataclasses

from kgroup.errors import InvalidArgument

__all__ = ["JaasModule", "parse_jaas"]


@dataclasses.dataclass(frozen=True)
class JaasModule:
    """JaasModule is one login module entry of a JAAS config: its class, control flag and
    options."""

    login_module: str
    flag: str
    options: dict[str, str]


_FLAGS = ("required", "requisite", "sufficient", "optional")


def _jaas_tokens(text: str) -> list[tuple[str, str | None]]:
    """``text`` as Java's StreamTokenizer reads it for Kafka's JaasConfig: (kind, value) with
    kind ``word``, ``quoted``, ``number`` (no string value: Kafka refuses it as a value) or the
    character of an ordinary one (``=``, ``;``). Comments ``//`` and ``/* */`` are skipped."""
    out: list[tuple[str, str | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c <= " ":
            i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == "/":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif c in "\"'":
            j, buf = i + 1, []
            while j < n and text[j] != c and text[j] != "\n":
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                    buf.append({"n": "\n", "t": "\t", "r": "\r"}.get(text[j], text[j]))
                else:
                    buf.append(text[j])
                j += 1
            out.append(("quoted", "".join(buf)))
            i = j + 1
        elif c.isdigit() or c in ".-":
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] == "."):
                j += 1
            out.append(("number", None))
            i = j
        elif c.isalpha() or c in "_$" or ord(c) >= 160:
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "._-$" or ord(text[j]) >= 160):
                j += 1
            out.append(("word", text[i:j]))
            i = j
        else:
            out.append((c, None))
            i += 1
    return out


def parse_jaas(text: str) -> list[JaasModule]:
    """The login modules of a JAAS config string
    (``org.apache...PlainLoginModule required user_alice="secret";``), as Kafka's JaasConfig
    parses ``sasl.jaas.config``; InvalidArgument with Kafka's message if it cannot."""
    tokens = _jaas_tokens(text)
    modules: list[JaasModule] = []
    i = 0

    def value(k: int) -> str | None:
        return tokens[k][1] if k < len(tokens) else None

    while i < len(tokens):
        module = value(i) or ""
        i += 1
        if i >= len(tokens):
            raise InvalidArgument("Login module control flag not specified in JAAS config")
        flag = value(i)
        if flag is None:
            raise InvalidArgument("Login module control flag is not available in the JAAS config")
        if flag.lower() not in _FLAGS:
            raise InvalidArgument(f"Invalid login module control flag '{flag}' in JAAS config")
        i += 1
        options: dict[str, str] = {}
        while i < len(tokens) and tokens[i][0] != ";":
            key = value(i)
            if i + 2 >= len(tokens) or tokens[i + 1][0] != "=" or value(i + 2) is None:
                raise InvalidArgument(f"Value not specified for key '{key}' in JAAS config")
            options[str(key)] = str(value(i + 2))
            i += 3
        if i >= len(tokens):
            raise InvalidArgument("JAAS config entry not terminated by semi-colon")
        i += 1
        modules.append(JaasModule(module, flag.lower(), options))
    if not modules:
        raise InvalidArgument("Login module not specified in JAAS config")
    return modules

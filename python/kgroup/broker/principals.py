"""Principals from client certificates, as Kafka's ``DefaultKafkaPrincipalBuilder`` makes them:
``User:`` and the certificate's subject as Java's ``X500Principal.getName()`` writes it (RFC
2253, most specific first: ``CN=alice,O=kgroup``; :func:`distinguished_name`), mapped by
``ssl.principal.mapping.rules`` (:class:`PrincipalMapper`, Kafka's SslPrincipalMapper).

Pure Python, without ``ssl``: the config's validator uses it in processes that never load
OpenSSL.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = [
    "NoMatchingRule",
    "PrincipalMapper",
    "check_mapping_rules",
    "distinguished_name",
    "principal",
    "principal_mapper",
    "subject_alt_names",
]


class NoMatchingRule(ValueError):
    """No rule of ``ssl.principal.mapping.rules`` maps a certificate's name (Kafka's
    SslPrincipalMapper.NoMatchingRule): the client is not authenticated."""


# Kafka's SslPrincipalMapper.RULE_PATTERN: DEFAULT, or RULE:pattern/replacement/[LU], where
# pattern and replacement may hold backslash escapes; anything else is kept to be refused.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE)


class _Rule:
    __slots__ = ("default", "lower", "pattern", "replacement", "upper")

    def __init__(
        self,
        pattern: str | None = None,
        replacement: str = "",
        lower: bool = False,
        upper: bool = False,
    ) -> None:
        self.default = pattern is None
        self.pattern = re.compile(pattern) if pattern is not None else None
        self.replacement = replacement
        self.lower = lower
        self.upper = upper

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        groups = self.pattern.groups
        # Java's String.replaceAll: every match in the name is replaced (as re.sub does).
        result = self.pattern.sub(lambda m: _java_replacement(self.replacement, m, groups), dn)
        if self.lower:
            return result.lower()
        if self.upper:
            return result.upper()
        return result

    def __str__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        out = f"RULE:{self.pattern.pattern}/{self.replacement}"
        return out + ("/L" if self.lower else "/U" if self.upper else "")


def _java_replacement(template: str, m: re.Match[str], groups: int) -> str:
    """``template`` expanded as Java's Matcher.appendReplacement does (``$n`` a group, a
    backslash quotes the next character), after Kafka's rule that a ``$n`` naming a group the
    pattern does not have is literal text."""
    out: list[str] = []
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        if c == "\\" and i + 1 < n:
            out.append(template[i + 1])
            i += 2
            continue
        if c == "$" and i + 1 < n and template[i + 1].isdigit():
            ref = int(template[i + 1])
            if groups == 0 or (ref > groups and template[i + 1] != "0"):
                out.append(c)
                i += 1
                continue
            j = i + 2
            # Java takes more digits while the number still names a group.
            while j < n and template[j].isdigit() and ref * 10 + int(template[j]) <= groups:
                ref = ref * 10 + int(template[j])
                j += 1
            out.append(m.group(ref) or "")
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


class PrincipalMapper:
    """PrincipalMapper maps a certificate's distinguished name to a principal name with
    ``ssl.principal.mapping.rules``, as Kafka's SslPrincipalMapper does: the first rule that
    matches the whole name gives it (``DEFAULT``: the name itself; ``RULE:p/r/`` the name with
    the regular expression ``p`` replaced by ``r``, ``/L`` or ``/U`` then lower or upper
    case). Immutable, thread-safe."""

    def __init__(self, rules: str | None) -> None:
        text = "DEFAULT" if rules is None else rules
        self.rules: list[_Rule] = []
        for raw in (m.group(1) for m in _RULE_SPLITTER.finditer(text.strip())):
            m = _RULE_PARSER.match(raw)
            if m is None:
                raise ValueError(f"Invalid rule: {raw}")
            if m.end() != len(raw):
                raise ValueError(f"Invalid rule: `{raw}`, unmatched substring: `{raw[m.end() :]}`")
            if m.group(1) is not None:
                self.rules.append(_Rule())
            elif m.group(2) is not None:
                try:
                    self.rules.append(
                        _Rule(m.group(2), m.group(4), m.group(6) == "L", m.group(6) == "U")
                    )
                except re.error as e:
                    raise ValueError(f"Invalid rule: {raw}: {e}") from None
            # else an empty rule: ignored, as Kafka ignores it

    def name(self, dn: str) -> str:
        """The principal name of ``dn``; NoMatchingRule when no rule applies."""
        for rule in self.rules:
            out = rule.apply(dn)
            if out is not None:
                return out
        raise NoMatchingRule(f"No rules apply to {dn}, rules [{', '.join(map(str, self.rules))}]")

    def __repr__(self) -> str:
        return f"SslPrincipalMapper(rules = [{', '.join(map(str, self.rules))}])"


def check_mapping_rules(value: Any) -> str | None:
    """The validator of ``ssl.principal.mapping.rules``: the problem, or None."""
    try:
        PrincipalMapper(value)
    except ValueError as e:
        return str(e)
    return None


@functools.lru_cache(maxsize=16)
def principal_mapper(rules: str | None) -> PrincipalMapper:
    """The (shared) PrincipalMapper of ``rules``."""
    return PrincipalMapper(rules)


def principal(ssl_object: Any, mapper: PrincipalMapper) -> str | None:
    """The principal of the client at the other end of ``ssl_object`` (an ``ssl.SSLObject``
    after its handshake): ``User:`` and its mapped certificate name, or None when it sent no
    certificate (the caller keeps ``User:ANONYMOUS``). NoMatchingRule when no mapping rule
    applies."""
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return None
    return "User:" + mapper.name(distinguished_name(der))


# -- X.500 names as Java writes them ------------------------------------------------------

# The attribute keywords Java's X500Principal.getName() (RFC 2253) writes; any other attribute
# is written as its OID and its value's DER encoding in hex.
_KEYWORDS = {
    "2.5.4.3": "CN",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.9": "STREET",
    "0.9.2342.19200300.100.1.25": "DC",
    "0.9.2342.19200300.100.1.1": "UID",
}
_STRING_TAGS = {
    0x0C: "utf-8",  # UTF8String
    0x13: "latin-1",  # PrintableString
    0x14: "latin-1",  # TeletexString, as Java reads it
    0x16: "latin-1",  # IA5String
    0x1E: "utf-16-be",  # BMPString
    0x1C: "utf-32-be",  # UniversalString
}
_ESCAPED = ',+<>;"\\'


def _tlv(data: bytes, pos: int) -> tuple[int, int, int]:
    """The DER element at ``pos``: (tag, start of its contents, end of its contents)."""
    tag = data[pos]
    length = data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[pos : pos + count], "big")
        pos += count
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return tag, pos, pos + length


def _oid(body: bytes) -> str:
    parts: list[int] = []
    value = 0
    for b in body:
        value = (value << 7) | (b & 0x7F)
        if not b & 0x80:
            parts.append(value)
            value = 0
    first = parts[0]
    head = [min(first // 40, 2), first - 40 * min(first // 40, 2)]
    return ".".join(str(p) for p in head + parts[1:])


def _rfc2253_value(text: str) -> str:
    out = "".join("\\" + c if c in _ESCAPED else c for c in text)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def _subject(data: bytes) -> tuple[int, int]:
    """Where a certificate's (DER) subject Name is: (its start, its end), and the
    TBSCertificate's end."""
    _, start, _ = _tlv(data, 0)  # Certificate
    _, pos, _ = _tlv(data, start)  # TBSCertificate
    tag, _, end = _tlv(data, pos)
    if tag == 0xA0:  # [0] version
        pos = end
        tag, _, end = _tlv(data, pos)
    pos = end  # serialNumber
    for _ in range(3):  # signature, issuer, validity
        _, _, pos = _tlv(data, pos)
    return pos, _tlv(data, pos)[2]


def distinguished_name(der_certificate: bytes, separator: str = ",") -> str:
    """The subject of a certificate (DER) as Java's ``X500Principal.getName()`` writes it:
    RFC 2253, the most specific name first (``CN=alice,O=kgroup``). With ``separator=", "``,
    as its ``toString()`` does for common names (``CN=alice, O=kgroup``)."""
    data = der_certificate
    _, name_pos, name_end = _tlv(data, _subject(data)[0])
    rdns: list[str] = []
    while name_pos < name_end:
        _, set_pos, set_end = _tlv(data, name_pos)
        avas: list[str] = []
        while set_pos < set_end:
            _, ava_pos, ava_end = _tlv(data, set_pos)
            _, oid_start, oid_end = _tlv(data, ava_pos)
            oid = _oid(data[oid_start:oid_end])
            vtag, vstart, vend = _tlv(data, oid_end)
            keyword = _KEYWORDS.get(oid)
            encoding = _STRING_TAGS.get(vtag)
            if keyword is not None and encoding is not None:
                avas.append(f"{keyword}={_rfc2253_value(data[vstart:vend].decode(encoding))}")
            else:
                avas.append(f"{keyword or oid}=#{data[oid_end:vend].hex()}")
            set_pos = ava_end
        rdns.append("+".join(avas))
        name_pos = set_end
    return separator.join(reversed(rdns))


#: _SAN_OID is subjectAltName's extension id.
_SAN_OID = "2.5.29.17"


def subject_alt_names(der_certificate: bytes) -> list[tuple[int, str]]:
    """A certificate's (DER) subject alternative names, in its order, as Java's
    ``X509Certificate.getSubjectAlternativeNames()`` gives them: (GeneralName tag, value),
    with DNS names, e-mail addresses and URIs as written, IP addresses as Java prints them
    (``127.0.0.1``, ``0:0:0:0:0:0:0:1``) and registered ids dotted; other kinds as ``#`` and
    their DER in hex."""
    data = der_certificate
    _, tbs_start, _ = _tlv(data, 0)
    _, _, tbs_end = _tlv(data, tbs_start)
    pos = _subject(data)[1]
    pos = _tlv(data, pos)[2]  # subjectPublicKeyInfo
    while pos < tbs_end:
        tag, start, end = _tlv(data, pos)
        pos = end
        if tag != 0xA3:  # [1] issuerUniqueID, [2] subjectUniqueID
            continue
        _, ext_pos, ext_end = _tlv(data, start)  # Extensions
        while ext_pos < ext_end:
            _, item, item_end = _tlv(data, ext_pos)
            ext_pos = item_end
            _, oid_start, oid_end = _tlv(data, item)
            if _oid(data[oid_start:oid_end]) != _SAN_OID:
                continue
            tag, value_start, value_end = _tlv(data, oid_end)
            if tag == 0x01:  # critical
                tag, value_start, value_end = _tlv(data, value_end)
            _, names, names_end = _tlv(data, value_start)  # GeneralNames
            out: list[tuple[int, str]] = []
            while names < names_end:
                tag, name_start, name_end = _tlv(data, names)
                out.append(
                    (
                        tag & 0x1F,
                        _general_name(tag, data[name_start:name_end], data[names:name_end]),
                    )
                )
                names = name_end
            return out
    return []


def _general_name(tag: int, body: bytes, whole: bytes) -> str:
    kind = tag & 0x1F
    if tag & 0x20 == 0 and kind in (1, 2, 6):  # rfc822Name, dNSName, URI
        return body.decode("latin-1")
    if tag & 0x20 == 0 and kind == 7 and len(body) in (4, 16):  # iPAddress
        if len(body) == 4:
            return ".".join(str(b) for b in body)
        return ":".join(f"{int.from_bytes(body[i : i + 2], 'big'):x}" for i in range(0, 16, 2))
    if tag & 0x20 == 0 and kind == 8:  # registeredID
        return _oid(body)
    return "#" + whole.hex()

"""The authorizer's decisions, its ACL store and its validation, as Kafka's StandardAuthorizer
(cases from Kafka's StandardAuthorizerTest, AuthorizerInterfaceDefaultTest and
AclControlManagerTest, 4.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup import errors
from kgroup.acl import (
    CLUSTER_NAME,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)
from kgroup.broker.authorizer import STANDARD_AUTHORIZER, Authorizer, authorizer_from_config
from kgroup.broker.config import BrokerConfig, ConfigError

Op = AclOperation
T = ResourceType
P = ResourcePatternType
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY
LITERAL, PREFIXED = P.LITERAL, P.PREFIXED
HOST = "127.0.0.1"


def acl(
    t: ResourceType,
    name: str,
    pattern: ResourcePatternType,
    principal: str,
    host: str,
    op: AclOperation,
    permission: AclPermissionType,
) -> AclBinding:
    return AclBinding(t, name, pattern, principal, host, op, permission)


def authorizer(*acls: AclBinding, supers: tuple[str, ...] = (), allow: bool = False) -> Authorizer:
    a = Authorizer(supers, allow, None)
    assert a.create(list(acls)) == [None] * len(acls)
    return a


def decide(a: Authorizer, user: str, actions: list[tuple], host: str = HOST) -> list[bool]:
    return [a.authorize(f"User:{user}", host, op, t, name) for op, t, name in actions]


def foo_acl(op: AclOperation, permission: AclPermissionType) -> AclBinding:
    """Kafka's StandardAuthorizerTest.newFooAcl."""
    return acl(T.TOPIC, "foo_", PREFIXED, "User:bob", "*", op, permission)


def test_implication() -> None:
    # Kafka's StandardAuthorizerTest.testFindResultImplication.
    for op in (Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        assert authorizer(foo_acl(op, ALLOW)).authorize(
            "User:bob", HOST, Op.DESCRIBE, T.TOPIC, "foo_bar"
        )
    # CREATE does not imply DESCRIBE; a DENY implies nothing.
    assert not authorizer(foo_acl(Op.CREATE, ALLOW)).authorize(
        "User:bob", HOST, Op.DESCRIBE, T.TOPIC, "foo_bar"
    )
    for op in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
        denied_read = authorizer(foo_acl(op, DENY), foo_acl(Op.DESCRIBE, ALLOW))
        assert denied_read.authorize("User:bob", HOST, Op.DESCRIBE, T.TOPIC, "foo_bar")
    for op in (Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS):
        assert authorizer(foo_acl(op, ALLOW)).authorize(
            "User:bob", HOST, Op.DESCRIBE_CONFIGS, T.TOPIC, "foo_bar"
        )
    assert not authorizer(foo_acl(Op.ALTER_CONFIGS, ALLOW)).authorize(
        "User:bob", HOST, Op.ALTER, T.TOPIC, "foo_bar"
    )


def test_simple_authorizations() -> None:
    # Kafka's StandardAuthorizerTest.testSimpleAuthorizations.
    a = authorizer(
        foo_acl(Op.READ, ALLOW),
        foo_acl(Op.WRITE, ALLOW),
        acl(T.GROUP, "bar", LITERAL, "User:*", "*", Op.DESCRIBE_CONFIGS, ALLOW),
        acl(T.GROUP, "bar", LITERAL, "User:*", "*", Op.ALTER_CONFIGS, ALLOW),
    )
    assert decide(a, "bob", [(Op.READ, T.TOPIC, "foo_")]) == [True]
    assert decide(a, "fred", [(Op.ALTER_CONFIGS, T.GROUP, "bar")]) == [True]
    # Another principal, resource type or name: no ALLOW applies.
    assert decide(a, "fred", [(Op.READ, T.TOPIC, "foo_")]) == [False]
    assert decide(a, "bob", [(Op.READ, T.GROUP, "foo_")]) == [False]


def test_deny_precedence_with_operation_all() -> None:
    # Kafka's StandardAuthorizerTest.testDenyPrecedenceWithOperationAll.
    a = authorizer(
        acl(T.TOPIC, "foo", LITERAL, "User:alice", "*", Op.ALL, DENY),
        acl(T.TOPIC, "foo", PREFIXED, "User:alice", "*", Op.READ, ALLOW),
        acl(T.TOPIC, "foo", LITERAL, "User:*", "*", Op.ALL, DENY),
        acl(T.TOPIC, "foo", PREFIXED, "User:*", "*", Op.DESCRIBE, ALLOW),
    )
    assert decide(
        a,
        "alice",
        [
            (Op.WRITE, T.TOPIC, "foo"),
            (Op.READ, T.TOPIC, "foo"),
            (Op.DESCRIBE, T.TOPIC, "foo"),
            (Op.READ, T.TOPIC, "foobar"),
        ],
    ) == [False, False, False, True]
    assert decide(
        a,
        "bob",
        [
            (Op.DESCRIBE, T.TOPIC, "foo"),
            (Op.READ, T.TOPIC, "foo"),
            (Op.WRITE, T.TOPIC, "foo"),
            (Op.DESCRIBE, T.TOPIC, "foobaz"),
            (Op.READ, T.TOPIC, "foobaz"),
        ],
    ) == [False, False, False, True, False]


def test_topic_acl_with_operation_all() -> None:
    # Kafka's StandardAuthorizerTest.testTopicAclWithOperationAll.
    a = authorizer(
        acl(T.TOPIC, "foo", LITERAL, "User:*", "*", Op.ALL, ALLOW),
        acl(T.TOPIC, "bar", PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
        acl(T.TOPIC, "baz", LITERAL, "User:bob", "*", Op.ALL, ALLOW),
    )
    actions = [(Op.WRITE, T.TOPIC, "foo"), (Op.DESCRIBE_CONFIGS, T.TOPIC, "bar")]
    assert decide(a, "alice", [*actions, (Op.DESCRIBE, T.TOPIC, "baz")]) == [True, True, False]
    assert decide(
        a,
        "bob",
        [(Op.WRITE, T.TOPIC, "foo"), (Op.READ, T.TOPIC, "bar"), (Op.DESCRIBE, T.TOPIC, "baz")],
    ) == [True, False, True]
    assert decide(
        a,
        "malory",
        [(Op.DESCRIBE, T.TOPIC, "foo"), (Op.WRITE, T.TOPIC, "bar"), (Op.READ, T.TOPIC, "baz")],
    ) == [True, False, False]


def test_host_address() -> None:
    # Kafka's StandardAuthorizerTest.testHostAddressAclValidation (the local host 127.0.0.1).
    a = authorizer(
        acl(T.TOPIC, "foo", LITERAL, "User:alice", "192.168.1.1", Op.READ, DENY),
        acl(T.TOPIC, "foo", LITERAL, "User:alice", "*", Op.READ, ALLOW),
        acl(T.TOPIC, "bar", LITERAL, "User:bob", "192.168.1.2", Op.READ, ALLOW),
        acl(T.TOPIC, "bar", LITERAL, "User:*", HOST, Op.DESCRIBE, ALLOW),
    )
    actions = [(Op.READ, T.TOPIC, "foo"), (Op.READ, T.TOPIC, "bar"), (Op.DESCRIBE, T.TOPIC, "bar")]
    assert decide(a, "alice", actions, HOST) == [True, False, True]
    assert decide(a, "alice", actions, "192.168.1.1") == [False, False, False]
    assert decide(a, "alice", actions, "192.168.1.2") == [True, False, False]
    assert decide(a, "bob", actions, HOST) == [False, False, True]
    assert decide(a, "bob", actions, "192.168.1.1") == [False, False, False]
    assert decide(a, "bob", actions, "192.168.1.2") == [False, True, True]


def test_prefix_acls() -> None:
    # Kafka's StandardAuthorizerTest.testPrefixAcls.
    a = authorizer(
        acl(T.TOPIC, "fooa", PREFIXED, "User:alice", "*", Op.ALL, ALLOW),
        acl(T.TOPIC, "foobar", LITERAL, "User:bob", "*", Op.ALL, ALLOW),
        acl(T.TOPIC, "f", PREFIXED, "User:bob", "*", Op.ALL, ALLOW),
    )
    assert decide(
        a,
        "bob",
        [(Op.WRITE, T.TOPIC, "foobarr"), (Op.READ, T.TOPIC, "goobar"), (Op.READ, T.TOPIC, "fooa")],
    ) == [True, False, True]
    assert decide(
        a,
        "alice",
        [(Op.DESCRIBE, T.TOPIC, "fooa"), (Op.WRITE, T.TOPIC, "bar"), (Op.READ, T.TOPIC, "baz")],
    ) == [True, False, False]


def test_wildcard_resource_and_principal() -> None:
    a = authorizer(
        acl(T.TOPIC, "*", LITERAL, "User:*", "*", Op.READ, ALLOW),
        acl(T.TOPIC, "secret", LITERAL, "User:alice", "*", Op.READ, DENY),
    )
    assert decide(a, "alice", [(Op.READ, T.TOPIC, "t"), (Op.READ, T.TOPIC, "secret")]) == [
        True,
        False,
    ]
    # A literal "*" is a wildcard only as a whole name; the group type is another section.
    assert decide(a, "bob", [(Op.READ, T.TOPIC, "secret"), (Op.READ, T.GROUP, "g")]) == [
        True,
        False,
    ]


def test_super_users_and_allow_everyone() -> None:
    # Kafka's testAllowEveryoneIfNoAclFoundConfigEnabled: the default applies only where no ACL
    # names the resource at all, whoever the ACL is for.
    a = authorizer(
        acl(T.TOPIC, "topic1", LITERAL, "User:Alice", "*", Op.READ, ALLOW),
        supers=("User:alice", "User:chris"),
        allow=True,
    )
    assert decide(a, "Bob", [(Op.READ, T.TOPIC, "topic1"), (Op.READ, T.TOPIC, "topic2")]) == [
        False,
        True,
    ]
    # Super users may do anything, DENY or not; principals are case-sensitive.
    a.create([acl(T.TOPIC, "topic2", LITERAL, "User:*", "*", Op.ALL, DENY)])
    assert decide(a, "alice", [(Op.WRITE, T.TOPIC, "topic2")]) == [True]
    assert decide(a, "Alice", [(Op.WRITE, T.TOPIC, "topic2")]) == [False]
    # testAllowEveryoneIfNoAclFoundConfigDisabled: nothing without an ACL.
    b = authorizer(allow=False)
    assert decide(b, "bob", [(Op.READ, T.TOPIC, "topic2")]) == [False]


def test_authorize_by_resource_type() -> None:
    # Kafka's AuthorizerInterfaceDefaultTest (AbstractAuthorizerTest's
    # testAuthorizeByResourceTypeWithAllHostAce and ...DenyTakesPrecedence cases).
    def by_type(a: Authorizer, user: str = "alice") -> bool:
        return a.authorize_by_resource_type(f"User:{user}", HOST, Op.WRITE, T.TOPIC)

    assert not by_type(authorizer())
    assert by_type(authorizer(allow=True))
    assert by_type(authorizer(supers=("User:alice",)))
    allowed = acl(T.TOPIC, "t", LITERAL, "User:alice", "*", Op.WRITE, ALLOW)
    assert by_type(authorizer(allowed))
    assert not by_type(authorizer(allowed), "bob")
    # A DENY of the same literal, or of a prefix of it, outweighs the ALLOW.
    assert not by_type(
        authorizer(allowed, acl(T.TOPIC, "t", LITERAL, "User:alice", "*", Op.WRITE, DENY))
    )
    assert not by_type(
        authorizer(allowed, acl(T.TOPIC, "t", PREFIXED, "User:*", "*", Op.WRITE, DENY))
    )
    # ... but a DENY of another name does not; a wildcard DENY denies every name.
    assert by_type(
        authorizer(allowed, acl(T.TOPIC, "u", LITERAL, "User:alice", "*", Op.WRITE, DENY))
    )
    assert not by_type(
        authorizer(
            acl(T.TOPIC, "*", LITERAL, "User:alice", "*", Op.WRITE, ALLOW),
            acl(T.TOPIC, "*", LITERAL, "User:alice", "*", Op.WRITE, DENY),
        )
    )
    # Another host's ACL does not count.
    assert not by_type(
        authorizer(acl(T.TOPIC, "t", LITERAL, "User:alice", "10.0.0.1", Op.WRITE, ALLOW))
    )


def test_authorized_operations() -> None:
    a = authorizer(
        acl(T.TOPIC, "t", LITERAL, "User:alice", "*", Op.READ, ALLOW),
        acl(T.TOPIC, "t", LITERAL, "User:alice", "*", Op.ALTER_CONFIGS, ALLOW),
    )
    bits = a.authorized_operations("User:alice", HOST, T.TOPIC, "t")
    expected = {Op.READ, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS}
    assert bits == sum(1 << op for op in expected)
    assert a.authorized_operations("User:bob", HOST, T.TOPIC, "t") == 0


def test_filters() -> None:
    # Kafka's ResourcePatternFilterTest and AclBindingFilterTest: MATCH finds every binding that
    # applies to the name; ANY any pattern of that exact name.
    lit = acl(T.TOPIC, "orders", LITERAL, "User:a", "*", Op.READ, ALLOW)
    wild = acl(T.TOPIC, "*", LITERAL, "User:a", "*", Op.READ, ALLOW)
    pre = acl(T.TOPIC, "ord", PREFIXED, "User:a", "*", Op.READ, ALLOW)
    other = acl(T.GROUP, "orders", LITERAL, "User:b", "h", Op.WRITE, DENY)
    a = authorizer(lit, wild, pre, other)

    def sel(*args: object) -> set[AclBinding]:
        return set(a.acls(AclBindingFilter(*args)))  # type: ignore[arg-type]

    anything = (Op.ANY, AclPermissionType.ANY)
    assert sel(T.ANY, None, P.ANY, None, None, *anything) == {lit, wild, pre, other}
    assert sel(T.TOPIC, "orders", P.MATCH, None, None, *anything) == {lit, wild, pre}
    assert sel(T.TOPIC, "orders", P.ANY, None, None, *anything) == {lit}
    assert sel(T.TOPIC, "orders", P.LITERAL, None, None, *anything) == {lit}
    assert sel(T.TOPIC, "ord", P.PREFIXED, None, None, *anything) == {pre}
    assert sel(T.TOPIC, None, P.PREFIXED, None, None, *anything) == {pre}
    assert sel(T.ANY, None, P.ANY, "User:b", None, *anything) == {other}
    assert sel(T.ANY, None, P.ANY, None, "h", Op.WRITE, DENY) == {other}
    assert sel(T.ANY, None, P.ANY, None, None, Op.WRITE, ALLOW) == set()


def test_delete_and_describe() -> None:
    lit = acl(T.TOPIC, "orders", LITERAL, "User:a", "*", Op.READ, ALLOW)
    pre = acl(T.TOPIC, "ord", PREFIXED, "User:a", "*", Op.READ, ALLOW)
    a = authorizer(lit, pre)
    # Creating a binding again succeeds and stores it once.
    assert a.create([lit, lit]) == [None, None]
    assert len(a) == 2
    anything = (None, None, Op.ANY, AclPermissionType.ANY)
    results = a.delete(
        [
            AclBindingFilter(T.TOPIC, "orders", P.MATCH, *anything),
            AclBindingFilter(T.TOPIC, "orders", P.LITERAL, *anything),
            AclBindingFilter(T.UNKNOWN, None, P.ANY, *anything),
        ]
    )
    # Every filter answers with what it matched before the request removed anything.
    assert results[0] == [lit, pre]
    assert results[1] == [lit]
    assert isinstance(results[2], errors.InvalidRequest)
    assert len(a) == 0
    assert not a.authorize("User:a", HOST, Op.READ, T.TOPIC, "orders")


@pytest.mark.parametrize(
    ("binding", "message"),
    [
        # Kafka's AclApis (the broker's own checks) then AclControlManager.validateNewAcl.
        (
            acl(T.CLUSTER, "other", LITERAL, "User:a", "*", Op.ALTER, ALLOW),
            "The only valid name for the CLUSTER resource is kafka-cluster",
        ),
        (acl(T.TOPIC, "", LITERAL, "User:a", "*", Op.READ, ALLOW), "Invalid empty resource name"),
        (acl(T.ANY, "t", LITERAL, "User:a", "*", Op.READ, ALLOW), "Invalid resourceType ANY"),
        (acl(T.TOPIC, "t", P.MATCH, "User:a", "*", Op.READ, ALLOW), "Invalid patternType MATCH"),
        (acl(T.TOPIC, "t", P.ANY, "User:a", "*", Op.READ, ALLOW), "Invalid patternType ANY"),
        (acl(T.TOPIC, "t", LITERAL, "User:a", "*", Op.ANY, ALLOW), "Invalid operation ANY"),
        (
            acl(T.TOPIC, "t", LITERAL, "User:a", "*", Op.READ, AclPermissionType.ANY),
            "Invalid permissionType ANY",
        ),
        (
            acl(T.TOPIC, "t", LITERAL, "alice", "*", Op.READ, ALLOW),
            "Could not parse principal from `alice` (no colon is present separating the "
            "principal type from the principal name)",
        ),
    ],
)
def test_create_refuses(binding: AclBinding, message: str) -> None:
    a = authorizer()
    [error] = a.create([binding])
    assert isinstance(error, errors.InvalidRequest)
    assert str(error) == message
    assert len(a) == 0
    ok = acl(T.CLUSTER, CLUSTER_NAME, LITERAL, "User:a", "*", Op.ALTER, ALLOW)
    assert a.create([ok]) == [None]


def test_acls_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "acls.json"
    a = Authorizer((), False, path)
    kept = acl(T.GROUP, "g", PREFIXED, "User:a", "10.0.0.1", Op.READ, DENY)
    gone = acl(T.TOPIC, "t", LITERAL, "User:a", "*", Op.WRITE, ALLOW)
    a.create([kept, gone])
    a.delete([AclBindingFilter(T.TOPIC, None, P.ANY, None, None, Op.ANY, AclPermissionType.ANY)])
    b = Authorizer((), False, path)
    assert b.acls(AclBindingFilter(T.ANY, None, P.ANY, None, None, Op.ANY, 1)) == [kept]


def test_config() -> None:
    assert authorizer_from_config(BrokerConfig({"log.dirs": "/nonexistent"})) is None
    a = authorizer_from_config(
        BrokerConfig(
            {
                "authorizer.class.name": STANDARD_AUTHORIZER,
                # Kafka's StandardAuthorizerTest.testGetConfiguredSuperUsers: ';' separated,
                # blanks dropped.
                "super.users": " ;User:bob;User:alice ; User:@$%#\\^&*()_;",
                "allow.everyone.if.no.acl.found": "true",
            }
        )
    )
    assert a is not None
    assert a.super_users == {"User:bob", "User:alice", "User:@$%#\\^&*()_"}
    assert a.allow_if_no_acl
    with pytest.raises(ConfigError, match=r"authorizer\.class\.name"):
        authorizer_from_config(
            BrokerConfig({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"})
        )


def _reference(acls: list[AclBinding], allow: bool, principal: str, host: str, op, t, name):
    """Kafka's StandardAuthorizerData.findAclRule, written out plainly over every binding."""
    applies = [
        b
        for b in acls
        if b.restype == t
        and (
            (b.resource_pattern_type == LITERAL and b.name in (name, "*"))
            or (b.resource_pattern_type == PREFIXED and name.startswith(b.name))
        )
    ]
    implied = {
        Op.DESCRIBE: {Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER},
        Op.DESCRIBE_CONFIGS: {Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS},
    }

    def matches(b: AclBinding) -> bool:
        if b.principal not in (principal, "User:*") or b.host not in (host, "*"):
            return False
        if b.operation == Op.ALL:
            return True
        if b.permission_type == ALLOW:
            return b.operation in implied.get(op, {op})
        return b.operation == op

    matching = [b for b in applies if matches(b)]
    if any(b.permission_type == DENY for b in matching):
        return False
    if matching:
        return True
    return allow and not applies


names = st.sampled_from(["", "a", "ab", "abc", "abd", "b", "*"])
bindings = st.builds(
    AclBinding,
    st.sampled_from([T.TOPIC, T.GROUP]),
    names.filter(bool),
    st.sampled_from([LITERAL, PREFIXED]),
    st.sampled_from(["User:a", "User:b", "User:*"]),
    st.sampled_from(["*", HOST, "10.0.0.1"]),
    st.sampled_from(
        [Op.ALL, Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS]
    ),
    st.sampled_from([ALLOW, DENY]),
)


@settings(max_examples=300, deadline=None)
@given(
    acls=st.lists(bindings, max_size=12),
    removed=st.integers(0, 12),
    allow=st.booleans(),
    principal=st.sampled_from(["User:a", "User:b"]),
    op=st.sampled_from([Op.READ, Op.WRITE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS]),
    t=st.sampled_from([T.TOPIC, T.GROUP]),
    name=names.filter(bool),
)
def test_decisions_match_kafkas_rule(acls, removed, allow, principal, op, t, name) -> None:
    # The indexes (literal names, prefix lengths) against every binding scanned plainly, after
    # adding and removing some: the same decision.
    a = Authorizer((), allow, None)
    a.create(acls)
    gone = list(dict.fromkeys(acls))[:removed]
    for b in gone:
        a.delete(
            [
                AclBindingFilter(
                    b.restype,
                    b.name,
                    b.resource_pattern_type,
                    b.principal,
                    b.host,
                    b.operation,
                    b.permission_type,
                )
            ]
        )
    kept = [b for b in dict.fromkeys(acls) if b not in gone]
    want = _reference(kept, allow, principal, HOST, op, t, name)
    assert a.authorize(principal, HOST, op, t, name) == want

"""kgroup.errors: one exception tree for everything kgroup raises.

Every exception derives from :class:`KGroupError`, and also from the standard exception whose
meaning matches, so existing ``except ValueError`` / ``except TypeError`` clauses keep working.
"""

from __future__ import annotations

__all__ = ["DecodeError", "InvalidArgument", "InvalidType", "KGroupError"]


class KGroupError(Exception):
    """Base of every exception kgroup raises."""


class InvalidArgument(KGroupError, ValueError):
    """An argument is out of its range (a partition count below 1, an unknown hash name...)."""


class InvalidType(KGroupError, TypeError):
    """A value has a type kgroup cannot use (a key that is neither bytes, str nor None...)."""


class DecodeError(KGroupError, ValueError):
    """Bytes that do not decode: a truncated or malformed payload, frame or buffer."""

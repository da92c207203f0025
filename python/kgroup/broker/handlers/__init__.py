"""The broker's request handlers: one module per api, named as its definition in
``rust/protocol/messages/<api>.rs``. Each opens with the versions it serves and what changed
between them, and declares ``API_KEY``, ``VERSIONS`` (the range ApiVersions advertises) and
``handle(ctx)``, which returns the response body, an awaitable of it (a Fetch long poll, an
acks=all Produce waiting for its fsync), or None when no response is sent (acks=0). The group
apis' handlers return what the group coordinator writes instead: a whole response frame
(``bytes``), or a future of one (a parked JoinGroup).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

__all__ = ["HANDLERS"]

#: HANDLERS maps each api key the broker serves to its handler module: every module of this
#: package.
HANDLERS: dict[int, ModuleType] = {
    int(m.API_KEY): m
    for m in (
        importlib.import_module(f"{__name__}.{info.name}")
        for info in pkgutil.iter_modules(__path__)
    )
}

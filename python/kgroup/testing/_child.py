"""A test broker in a process of its own: ``python -m kgroup.testing._child OPTIONS_JSON``.

It starts the broker, then listens for the test kit on a Unix socket
(``multiprocessing.connection``, authenticated with the key in ``KGROUP_TESTING_AUTHKEY``),
writes one line of JSON to its standard output (``{"port": ..., "control": ...}``) and serves
the kit's calls (``_control.Control``) until told to stop, SIGTERM, or the kit's end of the
socket closes (the test process died): a child never outlives its test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import tempfile
import threading
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Any

from kgroup.broker import Broker, new_event_loop
from kgroup.testing._control import Control

log = logging.getLogger("kgroup.testing")


def main(argv: list[str]) -> int:
    options: dict[str, Any] = json.loads(argv[0])
    level = options.get("log_level")
    if level:
        logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    authkey = bytes.fromhex(os.environ.pop("KGROUP_TESTING_AUTHKEY"))
    loop = new_event_loop(options.get("event_loop", "auto"))
    asyncio.set_event_loop(loop)
    broker = Broker(
        options.get("data_dir"),
        host=options.get("host", "127.0.0.1"),
        port=int(options.get("port", 0)),
        config=options.get("config") or {},
    )
    loop.run_until_complete(broker.start())
    control = Control(broker)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    folder = tempfile.mkdtemp(prefix="kgroup-testing-")
    address = str(Path(folder) / "control")
    listener = Listener(address, family="AF_UNIX", authkey=authkey)
    assert broker.state is not None
    print(json.dumps({"port": broker.state.port, "control": address}), flush=True)

    def serve() -> None:
        try:
            conn = listener.accept()
        except OSError:
            loop.call_soon_threadsafe(stop.set)
            return
        try:
            _serve(conn, control, loop, stop)
        finally:
            conn.close()
            loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=serve, name="kgroup-testing-control", daemon=True).start()
    try:
        loop.run_until_complete(stop.wait())
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.rmdir(folder)
        with contextlib.suppress(Exception):
            control.state.faults.clear()
        loop.run_until_complete(broker.stop())
        loop.close()
    return 0


def _serve(
    conn: Connection, control: Control, loop: asyncio.AbstractEventLoop, stop: asyncio.Event
) -> None:
    while True:
        try:
            name, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        if name == "shutdown":
            conn.send(("ok", None))
            return
        future = asyncio.run_coroutine_threadsafe(control.call(name, args, kwargs), loop)
        try:
            reply: tuple[str, Any] = ("ok", future.result())
        except BaseException as e:  # the kit raises it again in the test
            reply = ("error", e)
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return
        except Exception as e:  # an answer that does not pickle
            conn.send(("error", RuntimeError(f"cannot send the answer to {name}: {e}")))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

# Typed stubs of the native module kgroup._native (rust/py/), one submodule per area as in the
# public package; `make lint` checks them against the built module (mypy.stubtest). Users
# import `kgroup`.

from . import assignors as assignors
from . import client as client
from . import errors as errors
from . import group as group
from . import log as log
from . import partitioners as partitioners
from . import protocol as protocol
from . import share as share
from . import txn as txn

__version__: str

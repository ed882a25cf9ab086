"""resourcedir: a local, in-memory test double of the Resource Directory
REST API (/api/v2/resource), for Python tests.

``start()`` runs the bundled binary for this process; ``connect()`` uses
the server RESOURCEDIR_URL names; each gives Directory handles (one fresh
namespace each) whose controls add faults, read the journal and seed data.
Installing the package also installs a pytest plugin: the ``resourcedir``
fixture.
"""

from ._binary import binary_path
from ._directory import Directory
from ._errors import ResourcedirError
from ._server import Server, connect, start
from ._types import Fault, FaultMatch, Request, RequestorType, Resource, Response

# Tracebacks name the class where users import it from.
ResourcedirError.__module__ = __name__

__all__ = [
    "Directory",
    "Fault",
    "FaultMatch",
    "Request",
    "RequestorType",
    "Resource",
    "ResourcedirError",
    "Response",
    "Server",
    "binary_path",
    "connect",
    "start",
]

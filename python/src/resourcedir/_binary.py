"""Where the binary that the platform wheel carries is, and running it as
the command line."""

import os
import subprocess
import sys
from typing import Optional, Sequence

from ._errors import ResourcedirError


def binary_path() -> str:
    """The bundled resourcedir binary, run in place from the installed
    package."""
    exe = "resourcedir.exe" if os.name == "nt" else "resourcedir"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", exe)
    if not os.path.isfile(path):
        raise ResourcedirError(
            "there is no binary at {}: this copy of the package is not a platform wheel's. "
            "Install the wheel for this platform (pip install resourcedir), "
            "or, where Go is, go install github.com/resourcedir/resourcedir/cmd/resourcedir@latest".format(path)
        )
    return path


def run(args: Optional[Sequence[str]] = None) -> int:
    """Runs the binary with args (the process's own by default). On POSIX
    the binary replaces this process, so its exit status and every signal
    are its own; Windows has no such exec, so there the status is passed
    on."""
    argv = list(sys.argv[1:] if args is None else args)
    try:
        path = binary_path()
    except ResourcedirError as err:
        print("resourcedir: {}".format(err), file=sys.stderr)
        return 1
    if os.name != "nt":
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(path, [path] + argv)
    proc = subprocess.Popen([path] + argv)
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            # The console gave the binary its Ctrl-C too; it decides.
            continue


def main() -> None:
    sys.exit(run())


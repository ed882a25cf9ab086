"""start(): the bundled binary on a free loopback port, for this process
alone; connect(): the server RESOURCEDIR_URL names."""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from typing import Any, Iterable, List, Optional, Sequence, Union

from ._binary import binary_path
from ._directory import Directory, create_namespace
from ._errors import ResourcedirError
from ._http import Client
from ._types import to_wire

URL_VAR = "RESOURCEDIR_URL"
CA_FILE_VAR = "RESOURCEDIR_CA_FILE"


class Server:
    """A resourcedir that start() runs: ``url`` is where it serves,
    ``namespace()`` gives a fresh directory of it, ``close()`` stops it. The
    server also stops within seconds of this process's death, however it
    dies (-exit-with-parent)."""

    def __init__(self, proc: "subprocess.Popen[bytes]", url: str, folder: str, ca_file: Optional[str], seconds: float) -> None:
        self.url = url
        self.start_seconds = seconds  # from starting the binary to the URL being known
        self._proc = proc
        self._folder = folder
        self._client = Client(url, ca_file)
        atexit.register(self.close)

    def __repr__(self) -> str:
        return "Server(url={!r}, pid={})".format(self.url, self._proc.pid)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def log_path(self) -> str:
        """The server's standard output and error (at -log-level warn:
        problems only). Gone after close()."""
        return os.path.join(self._folder, "server.log")

    def namespace(self, prefix: Optional[str] = None) -> Directory:
        """A fresh namespace: the server's seed, and a journal and faults of
        its own, under a name that starts with prefix when given."""
        return create_namespace(self._client, prefix)

    def close(self, timeout: float = 10.0) -> None:
        """Stops the server as at SIGTERM (killed after timeout seconds) and
        removes its temporary folder. A second close does nothing."""
        atexit.unregister(self.close)
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self._folder, ignore_errors=True)


def _flag_given(args: Sequence[str], name: str) -> bool:
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("-") and arg.lstrip("-").split("=", 1)[0] == name:
            return True
    return False


def start(
    seed: Union[str, "os.PathLike[str]", Iterable[Any], None] = None,
    args: Sequence[str] = (),
    timeout: float = 10.0,
) -> Server:
    """Starts the bundled binary on a free loopback port, in memory, in its
    own process group, and returns its Server once it serves (within timeout
    seconds). seed is a seed file's path, or a list of resources (dicts
    with the wire's names); args are more flags, which win over these
    defaults."""
    folder = tempfile.mkdtemp(prefix="resourcedir-")
    try:
        return _start(folder, seed, list(args), timeout)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _start(folder: str, seed: Any, args: List[str], timeout: float) -> Server:
    binary = binary_path()
    addr_file = os.path.join(folder, "addr")
    cmd = [binary, "-addr", "127.0.0.1:0", "-addr-file", addr_file, "-snapshot", "off", "-log-level", "warn"]
    cmd.append("-exit-with-parent")
    if seed is not None:
        if isinstance(seed, (str, os.PathLike)):
            seed_file = os.fspath(seed)
        else:
            seed_file = os.path.join(folder, "seed.json")
            with open(seed_file, "w", encoding="utf-8") as f:
                json.dump(to_wire(list(seed)), f)
        cmd += ["-seed", seed_file]
    ca_file = None
    # A generated certificate's CA goes where this package can trust it.
    if _flag_given(args, "tls") and not _flag_given(args, "tls-cert") and not _flag_given(args, "tls-ca-file"):
        ca_file = os.path.join(folder, "ca.pem")
        cmd += ["-tls-ca-file", ca_file]
    cmd += args

    log_path = os.path.join(folder, "server.log")
    began = time.monotonic()
    with open(log_path, "wb") as log:
        # Its own process group: a Ctrl-C at the terminal reaches this
        # process, which closes the server, not the server itself.
        if sys.platform == "win32":
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                creationflags=subprocess.CREATE_NEW_PROCESS_GROUP,
            )
        else:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
    try:
        url = _wait_for_url(proc, addr_file, began, timeout)
    except BaseException as err:
        # A Ctrl-C while waiting, too: no server is left behind.
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if isinstance(err, ResourcedirError):
            raise ResourcedirError("{}: {} ({})".format(err.message, _tail(log_path), " ".join(cmd))) from None
        raise
    return Server(proc, url, folder, ca_file, time.monotonic() - began)


def _wait_for_url(proc: "subprocess.Popen[bytes]", addr_file: str, began: float, timeout: float) -> str:
    while True:
        url = _read(addr_file)
        if url:
            return url
        status = proc.poll()
        if status is not None:
            raise ResourcedirError("the server exited with status {} before serving".format(status))
        if time.monotonic() > began + timeout:
            raise ResourcedirError("the server wrote no URL to {} within {}s".format(addr_file, timeout))
        time.sleep(0.005)


def _read(path: str) -> str:
    # The server writes the file atomically: once it is there, it is whole.
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            text = f.read()[-2000:].decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "it wrote nothing"


def attach(url: str) -> Client:
    """A client of the server at url (a server's URL; a namespace's path is
    dropped). An https URL is trusted through the CA file RESOURCEDIR_CA_FILE
    names, when set, as Go's Attach does."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ResourcedirError("{!r} is not a server's URL, such as http://127.0.0.1:8080".format(url))
    ca_file = None
    if parts.scheme == "https":
        ca_file = os.environ.get(CA_FILE_VAR) or None
    return Client("{}://{}".format(parts.scheme, parts.netloc), ca_file)


def connect(prefix: Optional[str] = None) -> Directory:
    """A fresh namespace of the server RESOURCEDIR_URL names, as
    ``resourcedir -- python -m pytest`` sets it; its name starts with prefix
    when given."""
    url = os.environ.get(URL_VAR, "")
    if not url:
        raise ResourcedirError(
            "{} is not set: run the tests under a server, as in resourcedir -- python -m pytest "
            "(or use resourcedir.start() for a server of this process's own)".format(URL_VAR)
        )
    return create_namespace(attach(url), prefix)

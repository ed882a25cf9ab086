"""The pytest plugin, registered through the pytest11 entry point, so that
installing the package is enough: the ``resourcedir`` fixture gives each
test a fresh namespace of one server per test session.

The server is the one RESOURCEDIR_URL names (``resourcedir -- python -m
pytest``, a CI service), else the bundled binary, started on first use and
stopped when the session ends. ``--resourcedir-seed FILE`` (or the
``resourcedir_seed`` ini option) seeds every namespace: a server this
plugin starts gets it as ``-seed``; on a shared server it is loaded into
each fresh namespace, and the server's own seed is left as it is.

A namespace of a passing test is deleted. A failing test's is kept, and
its report gets a ``resourcedir`` section: the namespace's name, its
console link and its last requests.
"""

import os
from typing import Any, Generator, List, Optional

import pytest

from ._directory import Directory, create_namespace
from ._errors import ResourcedirError
from ._http import Client
from ._server import URL_VAR, Server, attach, start

# How many of a failed test's requests its report shows.
REPORT_REQUESTS = 20


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("resourcedir", "resourcedir (the Resource Directory test double)")
    group.addoption(
        "--resourcedir-seed",
        dest="resourcedir_seed",
        metavar="FILE",
        default=None,
        help="seed file (a JSON array of resources) that every namespace of the resourcedir fixture starts from",
    )
    parser.addini(
        "resourcedir_seed",
        "seed file (a JSON array of resources) that every namespace of the resourcedir fixture starts from, "
        "relative to this ini file",
        default="",
    )


class _Session:
    """The session's one server, made on first use."""

    def __init__(self, seed_file: Optional[str]) -> None:
        self.seed_file = seed_file
        self.server = None  # type: Optional[Server]
        self.shared_url = ""
        self.made = 0
        self.kept = []  # type: List[Directory]
        self._client = None  # type: Optional[Client]
        self._seed_body = None  # type: Optional[bytes]
        self._failure = ""

    def namespace(self, test_name: str) -> Directory:
        client = self._connect()
        directory = create_namespace(client, test_name)
        self.made += 1
        if self._seed_body is not None:
            try:
                directory.seed(self._seed_body)
            except ResourcedirError as err:
                directory.close()
                raise ResourcedirError(
                    "the seed {} does not load into {}: {}".format(self.seed_file, directory.name, err),
                    status=err.status,
                ) from err
        return directory

    def _connect(self) -> Client:
        if self._client is not None:
            return self._client
        if self._failure:
            # One attempt per session: the same failure would take each
            # test as long again.
            raise ResourcedirError(self._failure)
        url = os.environ.get(URL_VAR, "")
        try:
            if url:
                client = attach(url)
                # Asked once here, so that a server that is not there is
                # one clear error rather than each test's own.
                client.call("GET", client.root + "/__admin/health", 200)
                if self.seed_file:
                    with open(self.seed_file, "rb") as f:
                        self._seed_body = f.read()
                self.shared_url = url
            else:
                self.server = start(seed=self.seed_file)
                client = self.server._client
        except (ResourcedirError, OSError) as err:
            where = "the server at {}={}".format(URL_VAR, url) if url else "the bundled server"
            self._failure = "resourcedir: {} is not usable: {}".format(where, err)
            raise ResourcedirError(self._failure) from err
        self._client = client
        return client

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def _seed_file(config: Any) -> Optional[str]:
    given = config.getoption("resourcedir_seed")
    if given:
        path = os.path.join(str(config.invocation_params.dir), given)
        source = "--resourcedir-seed"
    else:
        given = config.getini("resourcedir_seed")
        if not given:
            return None
        inipath = getattr(config, "inipath", None)
        base = os.path.dirname(str(inipath)) if inipath else str(config.rootpath)
        path = os.path.join(base, given)
        source = "the ini option resourcedir_seed"
    if not os.path.isfile(path):
        raise pytest.UsageError("{} names {}, which is not a file".format(source, path))
    return os.path.abspath(path)


def pytest_configure(config: Any) -> None:
    config._resourcedir = _Session(_seed_file(config))


def pytest_unconfigure(config: Any) -> None:
    session = getattr(config, "_resourcedir", None)
    if session is not None:
        session.close()


@pytest.fixture
def resourcedir(request: Any) -> Generator[Directory, None, None]:
    """A fresh namespace of the session's resourcedir: hand its ``url`` to
    the client under test as the base URL. Deleted after a passing test;
    kept, and shown in the report, after a failing one."""
    session = request.config._resourcedir
    directory = session.namespace(request.node.name)
    request.node._resourcedir = directory
    yield directory
    if getattr(request.node, "_resourcedir_failed", False):
        session.kept.append(directory)
    else:
        directory.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    directory = getattr(item, "_resourcedir", None)
    if directory is None or not report.failed:
        return
    item._resourcedir_failed = True
    if getattr(item, "_resourcedir_reported", False):
        return
    item._resourcedir_reported = True
    report.sections.append(("resourcedir", _describe(item.config._resourcedir, directory)))


def _describe(session: _Session, directory: Directory) -> str:
    lines = [
        "namespace {} is kept".format(directory.name),
        "console {}".format(directory.console_url),
        "journal {}/__admin/requests".format(directory.url),
    ]
    if session.server is not None:
        lines.append(
            "(the server this run started stops when the run ends: to look at the namespace afterwards, "
            "run a server yourself and set {} to its URL)".format(URL_VAR)
        )
    try:
        requests = directory.requests(limit=REPORT_REQUESTS)
    except ResourcedirError as err:
        lines.append("the journal could not be read: {}".format(err))
        return "\n".join(lines)
    if not requests:
        lines.append("no requests reached it")
    else:
        lines.append("the last {} requests:".format(len(requests)))
    for r in requests:
        target = r.Path + ("?" + r.Query if r.Query else "")
        line = "  #{} {} {} -> status {}, delivered {}".format(r.Seq, r.Method, target, r.Status, r.Delivered)
        if r.Delivered == 0:
            line += " (no answer)"
        if r.Fault is not None:
            line += " by fault {}".format(r.Fault)
        lines.append(line)
    return "\n".join(lines)


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    session = getattr(config, "_resourcedir", None)
    if session is None:
        return
    if session.server is not None:
        terminalreporter.write_line(
            "resourcedir: {} (the bundled server, started in {:.0f} ms), {}".format(
                session.server.url, session.server.start_seconds * 1000, _namespaces(session.made)
            )
        )
    elif session.shared_url:
        terminalreporter.write_line(
            "resourcedir: the server at {}={}, {}".format(URL_VAR, session.shared_url, _namespaces(session.made))
        )
    for directory in session.kept:
        terminalreporter.write_line(
            "resourcedir: kept {} of a failed test: console {}".format(directory.name, directory.console_url)
        )


def _namespaces(n: int) -> str:
    return "1 namespace" if n == 1 else "{} namespaces".format(n)

"""start(), connect() and the command line, as a user runs them."""

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import api

import resourcedir as rd
from resourcedir import ResourcedirError

ADA = {"FirstName": "Ada", "Surname": "Lovelace"}


def gone(pid: int, within: float) -> bool:
    """Whether the process pid has ended (and been reaped) within the
    deadline; polled, not slept on."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.01)
    return False


def test_start_seeds_from_a_list_and_closes() -> None:
    server = rd.start(seed=[ADA, {"Company": "Initech"}])
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert 0 < server.start_seconds < 10
        one, two = server.namespace(), server.namespace()
        assert [r.DisplayName for r in one.resources()] == ["Ada Lovelace", "Initech"]
        # The seed is the server's: the same Ids in every namespace.
        assert [r.Id for r in one.resources()] == [r.Id for r in two.resources()]
        log = Path(server.log_path)
        assert log.exists()
    finally:
        server.close()
    assert gone(server.pid, 10)
    assert not log.parent.exists()
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(server.url + "/__admin/health", timeout=5)
    server.close()  # twice is nothing


def test_start_seeds_from_a_file_and_passes_flags(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps([ADA] * 7))
    with rd.start(seed=str(seed), args=["-max-page-size", "5"]) as server:
        directory = server.namespace()
        assert len(directory.resources()) == 7
        status, page = api(directory.url, "GET", "/api/v2/resource?requestParams.pageSize=50")
        assert (status, len(page["ResourceList"]), page["TotalPages"]) == (200, 5, 2)
    with rd.start(seed=seed) as server:  # a Path too
        assert len(server.namespace().resources()) == 7


def test_a_server_that_cannot_start_says_why() -> None:
    with pytest.raises(ResourcedirError, match=r"exited with status 1 before serving: .*-no-such-flag"):
        rd.start(args=["-no-such-flag"])
    with pytest.raises(ResourcedirError, match=r"before serving: .*not-there\.json"):
        rd.start(seed="not-there.json")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_start_that_times_out_leaves_no_server() -> None:
    with pytest.raises(ResourcedirError, match=r"wrote no URL to (\S+)/addr within 0.0001s") as late:
        rd.start(timeout=0.0001)
    folder = re.search(r"to (\S+)/addr", str(late.value)).group(1)  # type: ignore[union-attr]
    assert not os.path.exists(folder)
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            assert folder.encode() not in cmdline.read_bytes(), cmdline
        except OSError:
            pass  # a process that ended meanwhile


def test_tls_is_trusted_through_the_ca_it_wrote() -> None:
    with rd.start(args=["-tls"]) as server:
        assert server.url.startswith("https://127.0.0.1:")
        directory = server.namespace("tls")
        assert directory.url.startswith("https://")
        directory.seed([ADA])
        assert [r.DisplayName for r in directory.resources()] == ["Ada Lovelace"]


def test_connect_uses_resourcedir_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for unset in (None, ""):
        if unset is None:
            monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
        else:
            monkeypatch.setenv("RESOURCEDIR_URL", unset)
        with pytest.raises(ResourcedirError) as refused:
            rd.connect()
        assert "RESOURCEDIR_URL is not set" in str(refused.value)
        assert "resourcedir -- python -m pytest" in str(refused.value)

    with rd.start() as server:
        monkeypatch.setenv("RESOURCEDIR_URL", server.url)
        one, two = rd.connect(), rd.connect("mine")
        assert one.name != two.name and two.name.startswith("mine-")
        one.seed([ADA])
        assert len(one.resources()) == 1 and two.resources() == []
        # A namespace's URL names the same server.
        monkeypatch.setenv("RESOURCEDIR_URL", one.url + "/")
        assert rd.connect().url.startswith(server.url + "/ns/")


def test_connect_over_https_trusts_resourcedir_ca_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca = tmp_path / "ca.pem"
    with rd.start(args=["-tls", "-tls-ca-file", str(ca)]) as server:
        monkeypatch.setenv("RESOURCEDIR_URL", server.url)
        monkeypatch.setenv("RESOURCEDIR_CA_FILE", str(ca))
        assert rd.connect().resources() == []
        monkeypatch.delenv("RESOURCEDIR_CA_FILE")
        with pytest.raises(ResourcedirError, match="CERTIFICATE_VERIFY_FAILED"):
            rd.connect()


def bin_dir() -> str:
    return os.path.dirname(sys.executable)


@pytest.mark.parametrize("command", [[sys.executable, "-m", "resourcedir"], [os.path.join(bin_dir(), "resourcedir")]])
def test_the_command_line_runs_the_binary(command: list) -> None:
    shown = subprocess.run(command + ["-version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.decode().startswith("resourcedir ")

    refused = subprocess.run(command + ["-no-such-flag"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    assert refused.returncode != 0 and b"-no-such-flag" in refused.stderr

    ran = subprocess.run(
        command + ["--", sys.executable, "-c", "import os, sys; sys.exit(7 if os.environ['RESOURCEDIR_URL'] else 1)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=30,
    )
    assert ran.returncode == 7, ran.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("command", [[sys.executable, "-m", "resourcedir"], [os.path.join(bin_dir(), "resourcedir")]])
def test_the_command_line_is_the_binary_for_signals(command: list, tmp_path: Path) -> None:
    """The wrapper execs: its pid is the binary's, so a signal sent to it
    reaches the server once, and the status is the binary's own."""
    running = tmp_path / "running"
    # The command says it runs: a signal before it started would stop the
    # server without running it (exit 1), which is not what is tested.
    script = "import pathlib, sys, time; pathlib.Path(sys.argv[1]).touch(); time.sleep(60)"
    proc = subprocess.Popen(command + ["--", sys.executable, "-c", script, str(running)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not running.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert running.exists(), proc.stderr.read() if proc.poll() is not None else "the command did not run within 10 s"
        assert os.readlink("/proc/{}/exe".format(proc.pid)) == rd.binary_path()
        proc.send_signal(signal.SIGTERM)
        # The command got SIGTERM from the server, which exits as it did.
        assert proc.wait(10) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()

"""The pytest plugin as installed: pytest sessions of their own
(pytester, in subprocesses) that use the resourcedir fixture."""

import json
import urllib.request
from typing import Iterator, List

import pytest

import resourcedir as rd

pytest_plugins = ["pytester"]

TWO_TESTS = """
import json, urllib.request

def create(base, body):
    req = urllib.request.Request(base + "/api/v2/resource", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)["Data"][0]["Id"]

def test_one(resourcedir):
    create(resourcedir.url, {"Company": "One"})
    assert [r.DisplayName for r in resourcedir.resources()] == SEEDED + ["One"]

def test_two(resourcedir):
    create(resourcedir.url, {"Company": "Two"})
    assert [r.DisplayName for r in resourcedir.resources()] == SEEDED + ["Two"]
"""

FAILING = """
import urllib.error, urllib.request

def test_fails(resourcedir):
    resourcedir.add_fault(Method="GET", Path="/api/v2/resource", Status=503, Times=1)
    for _ in range(2):
        try:
            urllib.request.urlopen(resourcedir.url + "/api/v2/resource?requestParams.pageSize=3").close()
        except urllib.error.HTTPError as err:
            err.close()
    assert False, "on purpose"

def test_passes(resourcedir):
    pass
"""


@pytest.fixture
def shared() -> Iterator[rd.Server]:
    with rd.start() as server:
        yield server


def namespaces(url: str) -> List[dict]:
    with urllib.request.urlopen(url + "/__admin/namespaces", timeout=10) as resp:
        return json.load(resp)["Namespaces"]


def test_each_test_gets_a_fresh_namespace_of_one_server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    pytester.makepyfile(test_two="SEEDED = []\n" + TWO_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["resourcedir: http://127.0.0.1:* (the bundled server, started in * ms), 2 namespaces"])


def test_no_server_when_no_test_asks(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=1)
    assert "resourcedir:" not in result.stdout.str()


def test_any_test_name_works(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    pytester.makepyfile(
        test_names='''
import pytest

@pytest.mark.parametrize("value", ["a/b c", "é" * 80, "", "x?y=1&z#", "..", "-"])
def test_named(resourcedir, value):
    assert 1 <= len(resourcedir.name) <= 64
    assert resourcedir.name.startswith("test_named")
    assert set(resourcedir.name) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
    resourcedir.seed([{"Company": value or "empty"}])

def test_a_name_far_longer_than_any_namespace_may_have_and_then_some_more_words(resourcedir):
    assert len(resourcedir.name) == 64

class TestInAClass:
    def test_method(self, resourcedir):
        assert resourcedir.name.startswith("test_method-")
'''
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=8)


def test_a_failing_test_keeps_its_namespace_and_reports_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, shared: rd.Server
) -> None:
    monkeypatch.setenv("RESOURCEDIR_URL", shared.url)
    pytester.makepyfile(test_failing=FAILING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=1, failed=1)
    left = [n["Name"] for n in namespaces(shared.url) if n["Name"] != "default"]
    assert len(left) == 1 and left[0].startswith("test_fails-"), left
    name = left[0]
    result.stdout.fnmatch_lines(
        [
            "*- resourcedir -*",
            "namespace {} is kept".format(name),
            "console {}/ns/{}/".format(shared.url, name),
            "the last 2 requests:",
            "  #1 GET /api/v2/resource?requestParams.pageSize=3 -> status 503, delivered 503 by fault 1",
            "  #2 GET /api/v2/resource?requestParams.pageSize=3 -> status 200, delivered 200",
            "resourcedir: the server at RESOURCEDIR_URL={}, 2 namespaces".format(shared.url),
            "resourcedir: kept {} of a failed test: console {}/ns/{}/".format(name, shared.url, name),
        ]
    )
    # Only the failing test's report has the section.
    assert result.stdout.str().count("- resourcedir -") == 1
    assert "stops when the run ends" not in result.stdout.str()


def test_a_failing_test_on_its_own_server_says_it_stops(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    pytester.makepyfile(test_failing=FAILING)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "namespace test_fails-* is kept",
            "console http://127.0.0.1:*/ns/test_fails-*/",
            "(the server this run started stops when the run ends*",
            "  #2 GET /api/v2/resource?requestParams.pageSize=3 -> status 200, delivered 200",
        ]
    )


SEED = [{"Company": "Seeded A"}, {"FirstName": "Seeded", "Surname": "B"}]
SEEDED = "SEEDED = ['Seeded A', 'Seeded B']\n"


def test_the_seed_option_seeds_a_server_it_starts(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    pytester.makefile(".json", seed=json.dumps(SEED))
    pytester.makepyfile(test_two=SEEDED + TWO_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--resourcedir-seed", "seed.json", timeout=60)
    result.assert_outcomes(passed=2)


def test_the_ini_option_seeds_relative_to_the_ini_file(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RESOURCEDIR_URL", raising=False)
    data = pytester.mkdir("data")
    (data / "seed.json").write_text(json.dumps(SEED))
    pytester.makeini("[pytest]\nresourcedir_seed = data/seed.json\n")
    tests = pytester.mkdir("tests")
    (tests / "test_two.py").write_text(SEEDED + TWO_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "tests", timeout=60)
    result.assert_outcomes(passed=2)


def test_a_shared_servers_namespaces_get_the_seed_and_the_server_keeps_its_own(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    own = tmp_path_factory.mktemp("own") / "own.json"
    own.write_text(json.dumps([{"Company": "The server's own"}]))
    with rd.start(seed=own) as server:
        monkeypatch.setenv("RESOURCEDIR_URL", server.url)
        pytester.makefile(".json", seed=json.dumps(SEED))
        # On a shared server, the namespace starts from the server's seed
        # and the file is loaded into it.
        pytester.makepyfile(test_two="SEEDED = [\"The server's own\", 'Seeded A', 'Seeded B']\n" + TWO_TESTS)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--resourcedir-seed", "seed.json", timeout=60)
        result.assert_outcomes(passed=2)
        # The passing tests' namespaces are gone; the server's seed is its own.
        assert [n["Name"] for n in namespaces(server.url)] == ["default"]
        assert [r.DisplayName for r in server.namespace().resources()] == ["The server's own"]


def test_a_seed_that_is_not_a_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--resourcedir-seed", "nothere.json", timeout=60)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--resourcedir-seed names */nothere.json, which is not a file*"])


def test_a_seed_the_shared_server_refuses_fails_the_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, shared: rd.Server
) -> None:
    monkeypatch.setenv("RESOURCEDIR_URL", shared.url)
    pytester.makefile(".json", seed=json.dumps([{"FirstName": "x" * 51}]))
    pytester.makepyfile(test_one="def test_one(resourcedir):\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--resourcedir-seed", "seed.json", timeout=60)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*the seed */seed.json does not load into test_one-*: *400*"])
    assert [n["Name"] for n in namespaces(shared.url)] == ["default"]


def test_an_unreachable_server_is_tried_once(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # Port 9 (discard) on loopback: nothing listens there in a test machine.
    monkeypatch.setenv("RESOURCEDIR_URL", "http://127.0.0.1:9")
    pytester.makepyfile(test_three="\n".join("def test_{}(resourcedir):\n    pass\n".format(i) for i in range(3)))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=60)
    result.assert_outcomes(errors=3)
    result.stdout.fnmatch_lines(["*resourcedir: the server at RESOURCEDIR_URL=http://127.0.0.1:9 is not usable: *no answer*"])

"""The Directory controls, each against the bundled server through the
plugin's own fixture."""

import json
import threading
import urllib.request
from typing import List

import pytest
from helpers import api

import resourcedir as rd
from resourcedir import Directory, Fault, FaultMatch, ResourcedirError

ADA = {"FirstName": "Ada", "Surname": "Lovelace", "Company": "Analytical Engines"}


def namespaces(directory: Directory) -> List[str]:
    root = directory.url.split("/ns/")[0]
    with urllib.request.urlopen(root + "/__admin/namespaces", timeout=10) as resp:
        return [n["Name"] for n in json.load(resp)["Namespaces"]]


def test_a_fresh_namespace_named_after_the_test(resourcedir: Directory) -> None:
    assert resourcedir.name.startswith("test_a_fresh_namespace_named_after_the_test-")
    assert resourcedir.url.endswith("/ns/" + resourcedir.name)
    assert resourcedir.console_url == resourcedir.url + "/"
    assert resourcedir.resources() == []
    assert resourcedir.requests() == []


def test_the_journal_keeps_the_wire_names(resourcedir: Directory) -> None:
    status, created = api(resourcedir.url, "POST", "/api/v2/resource", ADA)
    assert status in (200, 201)
    ident = created["Data"][0]["Id"]
    assert api(resourcedir.url, "GET", "/api/v2/resource?requestParams.pageSize=5")[0] == 200
    assert api(resourcedir.url, "PUT", "/api/v2/resource/" + ident, {"Id": ident})[0] == 400

    everything = resourcedir.requests()
    assert [(r.Method, r.Path, r.Status, r.Delivered) for r in everything] == [
        ("POST", "/api/v2/resource", status, status),
        ("GET", "/api/v2/resource", 200, 200),
        ("PUT", "/api/v2/resource/" + ident, 400, 400),
    ]
    first = everything[0]
    assert isinstance(first, rd.Request)
    assert first.Body == ADA
    assert first.Headers["Content-Type"] == "application/json"
    assert first.Fault is None
    assert first.Response is not None and first.Response.Body["Data"][0]["Id"] == ident
    assert everything[1].Query == "requestParams.pageSize=5"
    assert everything[1].Params == {"requestParams.pageSize": "5"}

    assert [r.Method for r in resourcedir.requests(method="PUT")] == ["PUT"]
    assert [r.Method for r in resourcedir.requests(path="/api/v2/resource/{id}")] == ["PUT"]
    assert [r.Method for r in resourcedir.requests(status=400)] == ["PUT"]
    assert [r.Method for r in resourcedir.requests(since=first.Seq)] == ["GET", "PUT"]
    assert [r.Method for r in resourcedir.requests(limit=1)] == ["PUT"]

    resourcedir.clear_requests()
    assert resourcedir.requests() == []
    api(resourcedir.url, "GET", "/api/v2/resource")
    (after,) = resourcedir.requests()
    assert after.Seq == everything[-1].Seq + 1


def test_a_fault_answers_then_lets_the_retry_through(resourcedir: Directory) -> None:
    fault = resourcedir.add_fault(Method="POST", Path="/api/v2/resource", Status=503, Times=1)
    assert api(resourcedir.url, "POST", "/api/v2/resource", ADA)[0] == 503
    assert api(resourcedir.url, "POST", "/api/v2/resource", ADA)[0] in (200, 201)
    (listed,) = resourcedir.faults()
    assert isinstance(listed, Fault)
    assert (listed.Id, listed.Method, listed.Path, listed.Status, listed.Times, listed.Fired) == (
        fault, "POST", "/api/v2/resource", 503, 1, 1,
    )
    first, retry = resourcedir.requests()
    assert (first.Status, first.Delivered, first.Fault) == (503, 503, fault)
    assert retry.Fault is None
    assert len(resourcedir.resources()) == 1


def test_faults_as_dataclasses_and_dicts(resourcedir: Directory) -> None:
    reset = resourcedir.add_fault(Fault(Path="/api/v2/resource/{id}", Kind="reset", Match=FaultMatch(Body={"Status": "Inactive"})))
    slow = resourcedir.add_fault({"Path": "*", "DelayMs": 1, "Headers": {"Retry-After": "2"}, "Status": 429}, Times=2)
    listed = resourcedir.faults()
    assert [f.Id for f in listed] == [reset, slow]
    assert listed[0].Kind == "reset" and listed[0].Match == FaultMatch(Body={"Status": "Inactive"})
    assert (listed[1].Status, listed[1].Times, listed[1].Headers) == (429, 2, {"Retry-After": "2"})

    resourcedir.remove_fault(reset)
    assert [f.Id for f in resourcedir.faults()] == [slow]
    resourcedir.clear_faults()
    assert resourcedir.faults() == []


def test_a_refused_control_carries_the_status_and_message(resourcedir: Directory) -> None:
    with pytest.raises(ResourcedirError) as refused:
        resourcedir.add_fault(Path="/nowhere", Status=503)
    err = refused.value
    assert err.status == 400
    assert err.message == "The fault is invalid; nothing was added."
    assert err.model_state is not None and "Path" in err.model_state
    assert "400: The fault is invalid" in str(err) and "/__admin/faults" in str(err)

    with pytest.raises(ResourcedirError) as missing:
        resourcedir.remove_fault(99)
    assert missing.value.status == 404

    with pytest.raises(ResourcedirError) as bad_seed:
        resourcedir.seed([{"FirstName": "x" * 51}])
    assert bad_seed.value.status == 400 and bad_seed.value.model_state


def test_wait_requests_waits_for_a_late_client(resourcedir: Directory) -> None:
    def late() -> None:
        # The journal's wait is what is tested, not this delay: the client
        # sends after wait_requests has asked.
        threading.Event().wait(0.2)
        api(resourcedir.url, "POST", "/api/v2/resource", ADA)

    sender = threading.Thread(target=late)
    sender.start()
    try:
        (posted,) = resourcedir.wait_requests(1, timeout=10, method="POST")
    finally:
        sender.join(10)
    assert posted.Path == "/api/v2/resource"

    with pytest.raises(AssertionError, match=r"waited 0.1s for 2 requests matching method=POST in .*, got 1"):
        resourcedir.wait_requests(2, timeout=0.1, method="POST")
    with pytest.raises(ValueError, match="at most 60"):
        resourcedir.wait_requests(1, timeout=61)


def test_seed_generate_reset_and_clear(resourcedir: Directory) -> None:
    given = "b0f2e9c4-1d7a-4e8b-9c3d-2a1b0c9d8e7f"
    ids = resourcedir.seed([dict(ADA, Id=given), {"Company": "Initech", "Status": "Inactive"}])
    assert ids[0] == given and len(ids) == 2
    assert resourcedir.seed(json.dumps([{"Company": "From JSON text"}]))
    generated = resourcedir.generate(3, rand_seed=7)
    assert len(generated) == 3

    listed = resourcedir.resources()
    assert [r.Id for r in listed[:2]] == ids and [r.Id for r in listed[3:]] == generated
    ada = listed[0]
    assert isinstance(ada, rd.Resource)
    assert (ada.DisplayName, ada.Status, ada.StatusId, ada.Types, ada.Email) == (
        "Ada Lovelace Analytical Engines", "Active", 1, [], None,
    )
    assert listed[1].Status == "Inactive" and listed[1].StatusId == 2

    resourcedir.add_fault(Path="*", Status=500)
    api(resourcedir.url, "GET", "/api/v2/resource")
    resourcedir.reset()
    assert (resourcedir.resources(), resourcedir.faults(), resourcedir.requests()) == ([], [], [])

    resourcedir.generate(2)
    resourcedir.clear_resources()
    assert resourcedir.resources() == []


def test_generate_repeats_for_a_rand_seed() -> None:
    with rd.start() as server:
        one, two = server.namespace("one"), server.namespace("two")
        one.generate(5, rand_seed=42)
        two.generate(5, rand_seed=42)
        names = [r.DisplayName for r in one.resources()]
        assert names == [r.DisplayName for r in two.resources()]
        assert len(set(names)) > 1


def test_listed_resources_seed_back(resourcedir: Directory) -> None:
    resourcedir.generate(4, rand_seed=3)
    listed = resourcedir.resources()
    with rd.start() as server:
        other = server.namespace()
        assert other.seed(listed) == [r.Id for r in listed]
        assert other.resources() == listed


def test_close_deletes_the_namespace() -> None:
    with rd.start() as server:
        directory = server.namespace("closing")
        assert directory.name in namespaces(directory)
        directory.close()
        assert directory.name not in namespaces(directory)
        directory.close()  # twice is nothing
        with server.namespace() as scoped:
            assert scoped.name.startswith("ns-")
            assert scoped.name in namespaces(scoped)
        assert scoped.name not in namespaces(scoped)


@pytest.mark.parametrize(
    "test_name, prefix",
    [
        ("test_x", "test_x"),
        ("test_x[a/b c]", "test_x-a-b-c"),
        ("test_é[ü]", "test_"),
        ("t" * 80, "t" * 47),
        ("[]", "py"),
        ("", "py"),
    ],
)
def test_a_test_name_becomes_a_prefix(test_name: str, prefix: str) -> None:
    from resourcedir._directory import namespace_prefix

    assert namespace_prefix(test_name) == prefix

"""The four things a team does first with the test double, as a user's
test file: nothing but the installed package and plain pytest (no
conftest.py, no options). .ci/python runs it and times it."""

import json
import urllib.error
import urllib.parse
import urllib.request

EDITABLE = ["Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Phone", "Mobile", "Fax",
            "Email", "AddressComment", "ExternalID", "Status", "Types"]


def call(base, method, path, body=None):
    """The client under test: JSON over HTTP; an error answer is returned,
    not raised, so that a test can look at it."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.load(err)


def create(base, body):
    status, answer = call(base, "POST", "/api/v2/resource", body)
    assert status < 300, answer
    return answer["Data"][0]


def test_create_and_a_filtered_list(resourcedir):
    ada = create(resourcedir.url, {"FirstName": "Ada", "Surname": "Lovelace", "Company": "Analytical Engines"})
    create(resourcedir.url, {"FirstName": "Grace", "Surname": "Hopper"})
    assert ada["DisplayName"] == "Ada Lovelace Analytical Engines"

    query = urllib.parse.urlencode({"requestParams.filters": "DisplayName~eq~'Ada Lovelace Analytical Engines'"})
    status, page = call(resourcedir.url, "GET", "/api/v2/resource?" + query)
    assert status == 200
    assert (page["TotalResults"], page["TotalPages"], page["Page"]) == (1, 1, 1)
    assert [r["Id"] for r in page["ResourceList"]] == [ada["Id"]]


def test_a_put_with_every_editable_key(resourcedir):
    ada = create(resourcedir.url, {"FirstName": "Ada", "Surname": "Lovelace"})
    body = {key: ada.get(key) for key in EDITABLE}
    body.update(Position="Analyst", Email="ada@example.org", Status="Inactive", Types=[{"Type": "Employee"}])

    status, updated = call(resourcedir.url, "PUT", "/api/v2/resource/" + ada["Id"], body)
    assert status == 200, updated
    assert (updated["Id"], updated["Position"], updated["Email"]) == (ada["Id"], "Analyst", "ada@example.org")
    assert (updated["Status"], updated["StatusId"]) == ("Inactive", 2)
    assert updated["Types"] == [{"Id": 16, "Type": "Employee", "_links": [], "_embedded": None}]

    # A partial update is what the real service refuses: every key, or a 400.
    del body["Fax"]
    status, refused = call(resourcedir.url, "PUT", "/api/v2/resource/" + ada["Id"], body)
    assert status == 400 and "Fax" in refused["ModelState"]


def test_a_fault_answers_503_once_then_the_retry_passes(resourcedir):
    fault = resourcedir.add_fault(Method="POST", Path="/api/v2/resource", Status=503, Times=1)
    body = {"Company": "Initech"}

    status, refused = call(resourcedir.url, "POST", "/api/v2/resource", body)
    assert status == 503 and refused["Message"]
    created = create(resourcedir.url, body)  # the retry

    assert [r.Id for r in resourcedir.resources()] == [created["Id"]]
    assert [(f.Id, f.Fired) for f in resourcedir.faults()] == [(fault, 1)]


def test_the_journal(resourcedir):
    ada = create(resourcedir.url, {"FirstName": "Ada", "Surname": "Lovelace"})
    call(resourcedir.url, "GET", "/api/v2/resource?requestParams.pageSize=5")
    call(resourcedir.url, "PUT", "/api/v2/resource/" + ada["Id"], {"Id": ada["Id"]})

    posted, listed, put = resourcedir.requests()
    assert (posted.Method, posted.Path, posted.Body) == ("POST", "/api/v2/resource", {"FirstName": "Ada", "Surname": "Lovelace"})
    assert (listed.Method, listed.Params, listed.Status) == ("GET", {"requestParams.pageSize": "5"}, 200)
    assert (put.Status, put.Delivered) == (400, 400)
    assert put.Response.Body["Message"]
    assert [r.Seq for r in resourcedir.requests(since=posted.Seq)] == [listed.Seq, put.Seq]
    assert resourcedir.wait_requests(1, timeout=1, path="/api/v2/resource/{id}") == [put]

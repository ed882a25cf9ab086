"""The vendor's Python client, as it speaks to the server.

The Assetic Python SDK (the `assetic` package, generated with swagger-codegen)
is what most teams on this API use. It cannot be installed here (no package
index), so these tests send exactly what it sends, as read from its published
wheels: HTTP Basic `username:api_key` as a default header on every request,
`Accept: application/json`, `Content-Type: application/json` on PUT and POST,
`User-Agent: Assetic_Python_SDK_<version>`, the host from ASSETICHOST plus
/api/v2/..., list parameters repeated (collection format `multi`), a model
object's body without the attributes left None, and answers read as plain
dicts. They run against the built binary under -auth:

    resourcedir -auth sdkuser:sdkkey -- python3 -m unittest .ci/sdk_test.py

Standard library only (Python 3.9 syntax).
"""

import base64
import json
import os
import unittest
import urllib.error
import urllib.parse
import urllib.request

USER, API_KEY = "sdkuser", "sdkkey"
SDK_VERSION = "2026.4.1.0"


class AsseticLikeClient:
    """What assetic.ApiClient does on the wire, for the calls used here."""

    def __init__(self, host):
        self.host = host.rstrip("/")  # ASSETICHOST: scheme and authority (here a namespace's URL)
        token = base64.b64encode(("%s:%s" % (USER, API_KEY)).encode()).decode()
        self.default_headers = {
            "Authorization": "Basic " + token,
            "Accept": "application/json",
            "User-Agent": "Assetic_Python_SDK_" + SDK_VERSION,
        }

    def call(self, method, path, query=(), body=None):
        """Returns (status, headers, parsed JSON or None)."""
        url = self.host + path
        if query:
            # collection format multi: a list parameter repeats its key.
            url += "?" + urllib.parse.urlencode(list(query))
        headers = dict(self.default_headers)
        data = None
        if method in ("POST", "PUT"):
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                raw = resp.read()
                return resp.status, resp.headers, json.loads(raw) if raw else None
        except urllib.error.HTTPError as err:
            raw = err.read()
            return err.code, err.headers, json.loads(raw) if raw else None

    # The SDK's API methods used here.
    def version_get(self):
        return self.call("GET", "/api/v2/version")

    def resource_get(self, filters=(), sorts=(), page=None, page_size=None):
        query = [("requestParams.filters", f) for f in filters]
        query += [("requestParams.sorts", s) for s in sorts]
        if page is not None:
            query.append(("requestParams.page", str(page)))
        if page_size is not None:
            query.append(("requestParams.pageSize", str(page_size)))
        return self.call("GET", "/api/v2/resource", query)

    def resource_post(self, model):
        return self.call("POST", "/api/v2/resource", body=sanitize(model))

    def resource_put(self, resource_id, body):
        return self.call("PUT", "/api/v2/resource/" + resource_id, body=body)


def sanitize(model):
    """ApiClient.sanitize_for_serialization: a model's None attributes are not sent."""
    if isinstance(model, dict):
        return {k: sanitize(v) for k, v in model.items() if v is not None}
    if isinstance(model, list):
        return [sanitize(v) for v in model]
    return model


def resource_model(**attrs):
    """A ResourceRepresentation with every attribute of the 2026 model, None unless given."""
    names = ["Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status", "StatusId",
             "ContractorOrganization", "Types", "ExternalID", "Phone", "Mobile", "Fax", "Email",
             "AddressComment", "Address"]
    model = dict.fromkeys(names)
    model.update(attrs)
    return model


def new_namespace():
    """A fresh namespace of the server resourcedir -- started: its URL is the SDK's host."""
    base = os.environ.get("RESOURCEDIR_URL", "")
    if not base:
        raise RuntimeError("RESOURCEDIR_URL is not set: run under resourcedir -auth %s:%s -- python3 -m unittest" % (USER, API_KEY))
    client = AsseticLikeClient(base)
    status, _, body = client.call("POST", "/__admin/namespaces", body={"Prefix": "sdk"})
    if status != 201:
        raise RuntimeError("POST /__admin/namespaces: %s %s" % (status, body))
    return body["BaseURL"]


class SDKFlow(unittest.TestCase):
    def setUp(self):
        self.api = AsseticLikeClient(new_namespace())

    def test_version_first(self):
        status, headers, v = self.api.version_get()
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/json; charset=utf-8")
        self.assertEqual(sorted(v), ["Build", "Major", "MajorRevision", "Minor", "MinorRevision", "Revision"])
        self.assertGreaterEqual(v["Major"], 2023)  # the SDK's own package test
        self.assertEqual(v["MajorRevision"], v["Revision"] >> 16)
        self.assertEqual(v["MinorRevision"], v["Revision"] & 0xFFFF)

    def test_without_credentials_is_401(self):
        anonymous = AsseticLikeClient(self.api.host)
        del anonymous.default_headers["Authorization"]
        status, headers, body = anonymous.version_get()
        self.assertEqual(status, 401)
        self.assertEqual(headers["WWW-Authenticate"], 'Basic realm="resourcedir"')
        self.assertIn("Message", body)

    def test_create_list_put_round_trip(self):
        # version first, as the SDK's users do.
        self.assertEqual(self.api.version_get()[0], 200)
        # A model object: everything left None is dropped from the body.
        status, _, created = self.api.resource_post(resource_model(
            FirstName="Ada", Surname="Lovelace", Company="Analytical Engines", Status="Active",
            Types=[{"Type": "Employee"}], ExternalID="E-1", ContractorOrganization="Babbage & Co"))
        self.assertEqual(status, 201)
        self.assertEqual(created["Total"], 1)
        rid = created["Data"][0]["Id"]
        self.assertEqual(created["Data"][0]["DisplayName"], "Ada Lovelace Analytical Engines")
        self.api.resource_post(resource_model(FirstName="Ada", Surname="Byron", Status="Inactive", Company="Other"))

        # Two filters, as a list: each key sent once per value, joined with ~and~.
        status, _, page = self.api.resource_get(filters=["FirstName~eq~'Ada'", "StatusId~eq~1"], sorts=["Surname-asc"])
        self.assertEqual(status, 200, page)
        self.assertEqual([r["Id"] for r in page["ResourceList"]], [rid])
        listed = page["ResourceList"][0]
        self.assertEqual(listed["ContractorOrganization"], "Babbage & Co")

        # The dict it listed, sent back with one change: every key is there,
        # nulls, StatusId, _links and _embedded included.
        listed["Position"] = "Countess"
        status, _, updated = self.api.resource_put(rid, listed)
        self.assertEqual(status, 200, updated)
        self.assertEqual(updated["Position"], "Countess")
        self.assertEqual(updated["ContractorOrganization"], "Babbage & Co")
        self.assertEqual(updated["_links"], [])
        self.assertIsNone(updated["_embedded"])

    def test_put_of_a_model_with_none_is_400(self):
        _, _, created = self.api.resource_post(resource_model(Company="Acme", Status="Active"))
        rid = created["Data"][0]["Id"]
        # A model with None attributes: the SDK drops them, so keys are missing.
        status, _, err = self.api.resource_put(rid, sanitize(resource_model(Id=rid, Company="Acme Ltd", Status="Active")))
        self.assertEqual(status, 400)
        for key in ("DisplayName", "FirstName", "Surname", "Types"):
            self.assertIn(key, err["Message"])
        self.assertIn("null", err["Message"])

    def test_repeated_page_is_400(self):
        status, _, err = self.api.call("GET", "/api/v2/resource", [("requestParams.page", "1"), ("requestParams.page", "2")])
        self.assertEqual(status, 400)
        self.assertIn("requestParams.page", json.dumps(err))

    def test_second_filter_error_names_its_position(self):
        status, _, err = self.api.resource_get(filters=["FirstName~eq~'Ada'", "Surname~eq~'unterminated"])
        self.assertEqual(status, 400)
        self.assertIn("requestParams.filters[1]", json.dumps(err))


if __name__ == "__main__":
    unittest.main()

"""The dataclasses against the schemas of the served OpenAPI document: a
property the server adds, drops or retypes fails here, not in a user's
test."""

import dataclasses
import inspect
import json
import typing
import urllib.request
from typing import AbstractSet, Any, Dict, Optional, Set

import pytest

import resourcedir as rd

# HAL properties that resources and types carry on some answers, always
# empty; the handles leave them out.
HAL = {"_links", "_embedded"}


@pytest.fixture(scope="module")
def openapi() -> Dict[str, Any]:
    with rd.start() as server:
        with urllib.request.urlopen(server.url + "/__admin/openapi.json", timeout=10) as resp:
            return json.load(resp)


def resolve(doc: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        node: Any = doc
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def json_types(doc: Dict[str, Any], schema: Dict[str, Any]) -> Optional[Set[str]]:
    """The JSON types a schema admits; None for any value."""
    schema = resolve(doc, schema)
    if "oneOf" in schema:
        found: Set[str] = set()
        for option in schema["oneOf"]:
            types = json_types(doc, option)
            if types is None:
                return None
            found |= types
        return found
    kind = schema.get("type")
    if kind is None:
        return None
    return set(kind) if isinstance(kind, list) else {kind}


def python_types(tp: Any) -> Optional[Set[str]]:
    """The JSON types a field's annotation admits; None for Any."""
    if tp is Any:
        return None
    origin = typing.get_origin(tp)
    if origin is typing.Union:
        found: Set[str] = set()
        for arg in typing.get_args(tp):
            types = python_types(arg)
            if types is None:
                return None
            found |= types
        return found
    if tp is type(None):
        return {"null"}
    if origin is list:
        return {"array"}
    if origin is dict or dataclasses.is_dataclass(tp):
        return {"object"}
    return {bool: {"boolean"}, int: {"integer"}, float: {"number"}, str: {"string"}}[tp]


def check(doc: Dict[str, Any], cls: type, schema: Dict[str, Any], output: bool, skip: AbstractSet[str] = frozenset()) -> None:
    schema = resolve(doc, schema)
    props = {k: v for k, v in schema["properties"].items() if k not in skip}
    fields = [f.name for f in dataclasses.fields(cls)]
    assert sorted(fields) == sorted(props), "{} has {}, the schema {}".format(cls.__name__, sorted(fields), sorted(props))
    hints = typing.get_type_hints(cls)
    required = set(schema.get("required") or [])
    for name, prop in props.items():
        want, have = json_types(doc, prop), python_types(hints[name])
        assert (want is None) == (have is None), "{}.{}: schema {}, field {}".format(cls.__name__, name, want, have)
        if want is None or have is None:
            continue
        assert want - {"null"} == have - {"null"}, "{}.{}: schema {}, field {}".format(cls.__name__, name, want, have)
        if "null" in want:
            assert "null" in have, "{}.{} may be null: Optional".format(cls.__name__, name)
        if output and name in required and "null" not in want:
            assert "null" not in have, "{}.{} is always there: not Optional".format(cls.__name__, name)


def test_fault_is_the_listed_fault(openapi: Dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    check(openapi, rd.Fault, schemas["Fault"], output=False)
    check(openapi, rd.FaultMatch, schemas["Fault"]["properties"]["Match"], output=False)
    # What add_fault sends: the fault less the server's own properties.
    fields = {f.name for f in dataclasses.fields(rd.Fault)}
    assert set(schemas["FaultSpec"]["properties"]) == fields - {"Id", "Fired"}
    assert schemas["FaultSpec"]["properties"]["Match"] == schemas["Fault"]["properties"]["Match"]
    assert set(schemas["FaultList"]["properties"]) == {"Faults"}


def test_request_is_the_journal_entry(openapi: Dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    check(openapi, rd.Request, schemas["JournalEntry"], output=True)
    check(openapi, rd.Response, schemas["JournalEntry"]["properties"]["Response"], output=True)
    assert "Requests" in schemas["Journal"]["properties"]


def test_resource_is_the_listed_resource(openapi: Dict[str, Any]) -> None:
    schemas = openapi["components"]["schemas"]
    listing = openapi["paths"]["/__admin/resources"]["get"]["responses"]["200"]["content"]["application/json"]
    data = resolve(openapi, listing["schema"])["properties"]["Data"]["items"]
    check(openapi, rd.Resource, data, output=True)
    check(openapi, rd.RequestorType, schemas["RequestorType"], output=True, skip=HAL)


def test_the_controls_names(openapi: Dict[str, Any]) -> None:
    """The property and parameter names the controls send and read."""
    schemas = openapi["components"]["schemas"]
    assert set(schemas["GenerateRequest"]["properties"]) == {"Count", "Seed"}
    assert set(schemas["SeedResponse"]["required"]) >= {"Ids"}
    made = openapi["paths"]["/__admin/namespaces"]["post"]
    assert set(made["requestBody"]["content"]["application/json"]["schema"]["properties"]) == {"Prefix"}
    answer = made["responses"]["201"]["content"]["application/json"]["schema"]
    assert set(answer["required"]) == {"Name", "BaseURL"}
    params = {p["name"] for p in openapi["paths"]["/__admin/requests"]["get"]["parameters"]}
    assert params == {"method", "path", "status", "since", "limit", "count", "wait"}
    for control in ("requests", "wait_requests"):
        params_of = inspect.signature(getattr(rd.Directory, control)).parameters
        kwonly = [name for name, p in params_of.items() if p.kind is p.KEYWORD_ONLY]
        assert kwonly == ["method", "path", "status", "since", "limit"]

"""The wire's shapes as dataclasses, fields named as the server names them.

Every class is checked against the schemas of the served
``/__admin/openapi.json`` by the package's tests, so a property the server
adds, drops or retypes fails there first.
"""

import dataclasses
import typing
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

T = TypeVar("T")

# A query parameter or header: one value, or a list when it was repeated.
StringOrList = Union[str, List[str]]


@dataclasses.dataclass
class FaultMatch:
    """Narrows the requests a fault matches; each part given must hold."""

    Query: Optional[Dict[str, str]] = None  # parameters present with these values
    Headers: Optional[Dict[str, str]] = None  # request headers present with these values
    # A string the request body must contain, or JSON properties it must have.
    Body: Optional[Union[str, Dict[str, Any]]] = None


@dataclasses.dataclass
class Fault:
    """A fault: an answer, a delay or a broken connection in place of the
    real answer to the requests it matches. As given to ``add_fault``,
    fields left None are not sent; ``Id`` and ``Fired`` are the server's, set
    in what ``faults()`` lists."""

    Id: Optional[int] = None
    Method: Optional[str] = None  # None, "" or "*" matches any
    Path: Optional[str] = None  # an /api/v2 path, exact or with {name} segments; "*" for every one
    Match: Optional[FaultMatch] = None
    Skip: Optional[int] = None  # matching requests let through before it fires
    Times: Optional[int] = None  # requests it answers; 0: until cleared
    Chance: Optional[float] = None  # 0 < p <= 1 that a match fires
    Seed: Optional[int] = None  # of Chance's draws
    Kind: Optional[str] = None  # response (default), reset, empty, garbage or hang
    Status: Optional[int] = None  # the answer's status, for a response
    Headers: Optional[Dict[str, str]] = None  # the answer's extra headers
    Body: Any = None  # the answer's body: a string as its text, else JSON
    DelayMs: Optional[int] = None  # wait first; alone, the real answer comes late
    After: Optional[bool] = None  # serve for real first, then answer with the fault
    Fired: Optional[int] = None  # how often it answered


@dataclasses.dataclass
class Response:
    """The answer a journal entry records."""

    Headers: Dict[str, StringOrList]
    Body: Any  # JSON when it was JSON, else a string; None when empty


@dataclasses.dataclass
class Request:
    """One journal entry: an /api/v2 request as the client sent it, what the
    server did (``Status``) and what the client received (``Delivered``, 0
    for no answer)."""

    Seq: int
    Time: str  # RFC 3339, as written
    RequestId: str
    Method: str
    Path: str
    Query: str  # the raw query string
    Params: Dict[str, StringOrList]  # the decoded query
    Headers: Dict[str, StringOrList]  # credentials masked
    Body: Any  # JSON when it was JSON, else a string; None when empty
    BodyTruncated: bool
    HeadersTruncated: bool
    Status: int
    Delivered: int
    DurationMs: float
    Fault: Optional[int]  # the Id of the fault that answered
    Response: Optional[Response]
    ResponseTruncated: bool
    # On a list that ignored query parameters: each to the closest known one
    # ({"requestParams.filter": "requestParams.filters"}); None otherwise.
    Ignored: Optional[Dict[str, str]] = None


@dataclasses.dataclass
class RequestorType:
    """A requestor type of the fixed table: 2 Team, 4 Customer,
    8 Contractor, 16 Employee, 32 Company."""

    Id: int
    Type: str


@dataclasses.dataclass
class Resource:
    """A resource as ``resources()`` lists it (the create's shape)."""

    Id: str
    DisplayName: str
    FirstName: Optional[str]
    Surname: Optional[str]
    Company: Optional[str]
    Position: Optional[str]
    Status: str
    StatusId: int
    ContractorOrganization: Optional[str]  # the vendor's 2026 model; null when not given
    Types: List[RequestorType]
    ExternalID: Optional[str]
    Phone: Optional[str]
    Mobile: Optional[str]
    Fax: Optional[str]
    Email: Optional[str]
    AddressComment: Optional[str]
    Address: Optional[Dict[str, Any]]


_hints: Dict[type, Dict[str, Any]] = {}


def from_wire(cls: Type[T], data: Dict[str, Any]) -> T:
    """cls made from a JSON object the server wrote. A property the class
    does not know is left out (the tests against the OpenAPI document catch
    it); one the server did not write is None."""
    hints = _hints.get(cls)
    if hints is None:
        hints = _hints[cls] = typing.get_type_hints(cls)
    values = {f.name: _value(hints[f.name], data.get(f.name)) for f in dataclasses.fields(cls)}
    return cls(**values)


def _value(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin is Union:
        kinds = [a for a in typing.get_args(tp) if a is not type(None)]
        return _value(kinds[0], value) if len(kinds) == 1 else value
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(tp)
        return [_value(item, v) for v in value]
    if dataclasses.is_dataclass(tp) and isinstance(value, dict):
        return from_wire(tp, value)
    return value


def to_wire(value: Any) -> Any:
    """value as JSON-ready data: a dataclass becomes an object of its fields
    that are not None, recursively."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_wire(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if getattr(value, f.name) is not None
        }
    if isinstance(value, dict):
        return {k: to_wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    return value

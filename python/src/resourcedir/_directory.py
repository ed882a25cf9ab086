"""Directory: a handle on one namespace of a server, with the Go handle's
controls under snake_case names."""

import json
import math
import urllib.parse
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from ._errors import ResourcedirError
from ._http import Client
from ._types import Fault, Request, Resource, from_wire, to_wire

# What a namespace name may hold (1 to 64 of them); the server adds a dash
# and 16 hex digits to a prefix, so a prefix has at most 47.
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
MAX_PREFIX = 64 - 1 - 16

# The journal waits at most a minute for the requests it is asked for.
MAX_WAIT = 60.0


def namespace_prefix(name: str) -> str:
    """name (a test's, parameters and all) as a namespace prefix: cut to the
    longest one, with a dash for each character a name may not hold."""
    prefix = "".join(c if c in NAME_CHARS else "-" for c in name[:MAX_PREFIX]).rstrip("-")
    return prefix or "py"


class Directory:
    """One directory of a resourcedir server: hand ``url`` to the client
    under test as its base URL, and drive the test-double controls through
    the methods. Data keeps the wire's names (``Method``, ``Path``,
    ``Status``, ...). A control the server refuses raises ResourcedirError
    with the status and the server's Message."""

    def __init__(self, url: str, name: str, client: Client) -> None:
        self.url = url  # the namespace's base URL, such as http://127.0.0.1:41234/ns/test_create-5b0f2e9c41d7a3e8
        self.name = name  # the namespace's name: "default" for the unprefixed paths
        self._client = client
        self._closed = False

    def __repr__(self) -> str:
        return "Directory(name={!r}, url={!r})".format(self.name, self.url)

    def __enter__(self) -> "Directory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def console_url(self) -> str:
        """The console page of this directory, for a person to look at."""
        return self.url + "/"

    def _admin(self, path: str) -> str:
        return self.url + "/__admin/" + path

    # Faults.

    def add_fault(self, fault: Union[Fault, Mapping[str, Any], None] = None, **fields: Any) -> int:
        """Adds a fault after the directory's others and returns its Id:
        ``add_fault(Method="POST", Path="/api/v2/resource", Status=503,
        Times=1)``, or a Fault, or a dict of its wire properties."""
        spec = dict(to_wire(fault) or {})
        spec.update(to_wire(fields))
        spec.pop("Id", None)
        spec.pop("Fired", None)
        added = self._client.call("POST", self._admin("faults"), 200, spec)
        faults = added.get("Faults") or []
        if len(faults) != 1:
            raise ResourcedirError("POST /__admin/faults added {} faults, want 1".format(len(faults)))
        return int(faults[0]["Id"])

    def faults(self) -> List[Fault]:
        """The directory's faults, in the order they are tried, each with
        how often it ``Fired``."""
        listed = self._client.call("GET", self._admin("faults"), 200)
        return [from_wire(Fault, f) for f in listed["Faults"]]

    def remove_fault(self, id: int) -> None:
        """Removes the fault with the Id add_fault returned."""
        self._client.call("DELETE", self._admin("faults/{}".format(int(id))), 200)

    def clear_faults(self) -> None:
        """Removes every fault."""
        self._client.call("DELETE", self._admin("faults"), 200)

    # The journal.

    def requests(
        self,
        *,
        method: Optional[str] = None,
        path: Optional[str] = None,
        status: Optional[int] = None,
        since: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> List[Request]:
        """The journal's entries, oldest first, that the filters select (the
        query's names: ``path`` exact or with ``{name}`` segments, ``since``
        a Seq, ``limit`` the newest so many)."""
        query = _filter(method, path, status, since, limit)
        journal = self._client.call("GET", self._admin("requests?" + urllib.parse.urlencode(query)), 200)
        return [from_wire(Request, r) for r in journal["Requests"]]

    def wait_requests(
        self,
        count: int,
        timeout: float = 5.0,
        *,
        method: Optional[str] = None,
        path: Optional[str] = None,
        status: Optional[int] = None,
        since: Optional[int] = None,
        limit: Optional[int] = None,
    ) -> List[Request]:
        """Waits up to timeout seconds (at most 60) until at least count
        entries match the filters, and returns them; fewer by then is an
        AssertionError. One request to the server, which answers as soon as
        they are there: for a client that sends after the call that started
        it returned."""
        if not 0 < timeout <= MAX_WAIT:
            raise ValueError("wait_requests: timeout is {!r} seconds; it must be more than 0 and at most 60".format(timeout))
        query = _filter(method, path, status, since, limit)
        query["count"] = str(int(count))
        query["wait"] = "{}ms".format(max(1, math.ceil(timeout * 1000)))
        journal = self._client.call(
            "GET", self._admin("requests?" + urllib.parse.urlencode(query)), 200, timeout=timeout + 30
        )
        found = [from_wire(Request, r) for r in journal["Requests"]]
        if len(found) < count:
            selected = urllib.parse.urlencode(_filter(method, path, status, since, limit)) or "no filter"
            raise AssertionError(
                "resourcedir: waited {}s for {} requests matching {} in {}, got {}".format(
                    timeout, count, selected, self.name, len(found)
                )
            )
        return found

    def clear_requests(self) -> None:
        """Empties the journal; Seq goes on from where it was."""
        self._client.call("DELETE", self._admin("requests"), 200)

    # Resources.

    def reset(self) -> None:
        """Brings the directory back to its seed, with an empty journal and
        no faults."""
        self._client.call("POST", self._admin("reset"), 200)

    def seed(self, resources: Union[Iterable[Any], str, bytes]) -> List[str]:
        """Adds resources, all or none, and returns their Ids in order:
        a list of resource dicts (wire names; the create rules apply; an Id
        may be given) or Resources, or the JSON text of such an array."""
        if isinstance(resources, str):
            body = resources.encode("utf-8")  # type: bytes
        elif isinstance(resources, bytes):
            body = resources
        else:
            body = json.dumps(to_wire(list(resources))).encode("utf-8")
        seeded = self._client.call("POST", self._admin("resources"), 200, body)
        return list(seeded["Ids"])

    def generate(self, n: int, rand_seed: Optional[int] = None) -> List[str]:
        """Adds n generated resources (the same ones for the same rand_seed)
        and returns their Ids."""
        spec = {"Count": int(n)}  # type: Dict[str, Any]
        if rand_seed is not None:
            spec["Seed"] = int(rand_seed)
        added = self._client.call("POST", self._admin("generate"), 200, spec)
        return list(added["Ids"])

    def resources(self) -> List[Resource]:
        """Every resource of the directory, in creation order."""
        listed = self._client.call("GET", self._admin("resources"), 200)
        return [from_wire(Resource, r) for r in listed["Data"]]

    def clear_resources(self) -> None:
        """Removes every resource, the seed's included, until the next
        reset."""
        self._client.call("DELETE", self._admin("resources"), 200)

    def close(self) -> None:
        """Deletes the namespace (the default one is left alone). A second
        close, or one after the server removed it, does nothing."""
        if self._closed or self.name == "default":
            return
        try:
            self._client.call("DELETE", self._client.root + "/__admin/namespaces/" + self.name, 200)
        except ResourcedirError as err:
            if err.status != 404:
                raise
        self._closed = True


def _filter(
    method: Optional[str], path: Optional[str], status: Optional[int], since: Optional[int], limit: Optional[int]
) -> Dict[str, str]:
    given = {"method": method, "path": path, "status": status, "since": since, "limit": limit}
    return {k: str(v) for k, v in given.items() if v is not None}


def create_namespace(client: Client, prefix: Optional[str] = None) -> Directory:
    """A fresh namespace on client's server, named from prefix (sanitized
    as namespace_prefix does) when given."""
    body = {"Prefix": namespace_prefix(prefix)} if prefix else None
    made = client.call("POST", client.root + "/__admin/namespaces", 201, body)
    return Directory(made["BaseURL"], made["Name"], client)

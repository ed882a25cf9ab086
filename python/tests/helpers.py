"""A plain HTTP client of the emulated API, as the code under test would
be."""

import json
import urllib.error
import urllib.request
from typing import Any, Tuple


def api(base: str, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.load(err)

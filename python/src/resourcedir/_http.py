"""The HTTP calls the controls make: JSON in, JSON out, with the server's
error Message carried into ResourcedirError."""

import ipaddress
import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, List, Optional, Tuple

from ._errors import ResourcedirError


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Client:
    """Sends control requests to one server. A loopback server is reached
    directly whatever the proxy variables say (as Go's client does); an
    https server is trusted through ca_file when given."""

    def __init__(self, root: str, ca_file: Optional[str] = None) -> None:
        self.root = root
        parts = urllib.parse.urlsplit(root)
        handlers = []  # type: List[urllib.request.BaseHandler]
        if parts.scheme == "https":
            handlers.append(urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca_file)))
        if _loopback(parts.hostname or ""):
            handlers.append(urllib.request.ProxyHandler({}))
        self._opener = urllib.request.build_opener(*handlers)

    def call(self, method: str, url: str, want: int, body: Any = None, timeout: float = 30.0) -> Any:
        """Sends the request and returns the decoded JSON answer, or raises
        ResourcedirError unless the status is want."""
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        status, text = self._send(req, timeout)
        parsed = None
        if text:
            try:
                parsed = json.loads(text.decode("utf-8"))
            except ValueError:
                parsed = None
        if status != want:
            message = "status {}, want {}".format(status, want)
            model_state = None
            if isinstance(parsed, dict) and isinstance(parsed.get("Message"), str):
                message = parsed["Message"]
                model_state = parsed.get("ModelState")
            elif text:
                message = "{}: {}".format(message, text.decode("utf-8", "replace").strip()[:500])
            raise ResourcedirError(message, status=status, method=method, url=url, model_state=model_state, body=parsed)
        if text and parsed is None:
            raise ResourcedirError(
                "the answer is not JSON: " + text.decode("utf-8", "replace")[:200], status=status, method=method, url=url
            )
        return parsed

    def _send(self, req: urllib.request.Request, timeout: float) -> Tuple[int, bytes]:
        try:
            with self._opener.open(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read()
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise ResourcedirError(
                "no answer: {} (is the server at {} running?)".format(reason, self.root),
                method=req.get_method(),
                url=req.full_url,
            ) from err

"""The one exception the package raises for a server's refusal or absence."""

from typing import Any, Dict, List, Optional


class ResourcedirError(Exception):
    """A control the server refused, a server that could not be reached or
    started, or a missing RESOURCEDIR_URL.

    ``status`` is the HTTP status of the answer (None when there was none),
    ``message`` the server's ``Message`` (or what went wrong), and
    ``model_state`` the server's ``ModelState`` when properties were at
    fault.
    """

    def __init__(
        self,
        message: str,
        status: Optional[int] = None,
        method: Optional[str] = None,
        url: Optional[str] = None,
        model_state: Optional[Dict[str, List[str]]] = None,
        body: Any = None,
    ) -> None:
        self.message = message
        self.status = status
        self.method = method
        self.url = url
        self.model_state = model_state
        self.body = body
        super().__init__(str(self))

    def __str__(self) -> str:
        text = self.message
        if self.status is not None:
            text = "{}: {}".format(self.status, text)
        if self.method and self.url:
            text = "{} {}: {}".format(self.method, self.url, text)
        if self.model_state:
            problems = "; ".join(
                "{}: {}".format(name, " ".join(found)) for name, found in self.model_state.items()
            )
            text = "{} ({})".format(text, problems)
        return text

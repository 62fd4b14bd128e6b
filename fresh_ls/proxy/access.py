"""Who may use the proxy: the agent it was started for, and nobody else on the machine.

The proxy listens on 127.0.0.1, where every local process (another user's included) and
every browser page (through DNS rebinding or a plain cross-origin ``fetch``) can reach it.
Whoever can send it a request can have it read a file of the root into a model request and
get the model's answer back, so a request is served only when:

- its path starts with the proxy's per-run secret (``/fresh-<secret>/...``): the base URL
  handed to the agent (``run``'s variables, ``proxies``' line, ``proxy.json``, mode 0600)
  carries it, and agents keep a base URL's path (docs/security.md); the secret is removed
  before the request goes upstream;
- its ``Host`` is a loopback name with the proxy's port (a rebound DNS name is not);
- it is no CORS preflight (``OPTIONS``) and carries no ``Origin`` (agents send none;
  browsers always do on the requests that could carry a body).

All of it is decided from the request line and headers, before the body is read.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

#: The names a loopback ``Host`` header may give (with the proxy's port).
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
#: What starts the secret's path segment (so a log or a URL shows what it is).
SECRET_PREFIX = "/fresh-"


def new_secret() -> str:
    """A per-run secret: 144 random bits, URL-safe (no quoting needed in any base URL)."""
    return secrets.token_urlsafe(18)


@dataclass
class Access:
    """The secret of one proxy and the port it listens on (known once bound)."""

    secret: str = field(default_factory=new_secret)
    port: int | None = None

    @property
    def prefix(self) -> str:
        """The base URL's path: ``/fresh-<secret>``."""
        return SECRET_PREFIX + self.secret

    def refusal(
        self, method: str, raw_path: str, host: str | None, origin: str | None
    ) -> tuple[str, str | None]:
        """``(why, None)`` for a request to refuse, else ``("", path)``: the path and query
        to send upstream (the secret removed, still encoded)."""
        if method == "OPTIONS" or origin is not None:
            return "requests from a browser (CORS, an Origin header) are refused", None
        if not self._loopback(host):
            return f"Host {host!r} is not this proxy's loopback address", None
        prefix = self.prefix
        given = raw_path[: len(prefix)]
        rest = raw_path[len(prefix) :]
        if not hmac.compare_digest(given.encode(), prefix.encode()) or rest[:1] not in (
            "",
            "/",
            "?",
        ):
            return (
                "this proxy serves only its agent: use the base URL `fresh-ls run` set, or "
                "the url in the state dir's proxy.json (it carries the proxy's secret)",
                None,
            )
        return "", rest if rest.startswith("/") else "/" + rest

    def _loopback(self, host: str | None) -> bool:
        if not host:
            return False
        name, _, port = host.rpartition(":")
        if not port.isdigit() or name.lower() not in LOOPBACK_HOSTS:
            return False  # no port, or a name that is not loopback (a rebound DNS name)
        return self.port is None or int(port) == self.port

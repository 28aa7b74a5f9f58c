"""Access control of a served env: a bearer token checked on every HTTP request and WebSocket
handshake (``GET /health`` excepted), and the rule that a server reachable from other machines
needs one.

The server reads its token from ``--token`` or the environment variable ``AGENTGYM_SERVE_TOKEN``;
the clients (:class:`~agentgym_envs.external_trainers.openenv.client.RemoteEnv`, the OpenEnv client, TRL's remote
path) send the token they are given, else the same variable's, as ``Authorization: Bearer ...``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

TOKEN_ENV = "AGENTGYM_SERVE_TOKEN"
"""The environment variable the server and the clients read the token from."""

OPEN_PATHS = frozenset({"/health"})
"""Paths answered without a token (a liveness probe runs nothing)."""

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


class InsecureBind(ValueError):
    """A server bound to a non-loopback address without a token (and without ``insecure``)."""


def resolve_token(token: str | None = None) -> str | None:
    """``token`` if given, else ``AGENTGYM_SERVE_TOKEN``'s value; an empty one counts as none."""
    token = token if token is not None else os.environ.get(TOKEN_ENV)
    return token or None


def auth_headers(token: str | None = None) -> dict[str, str]:
    """The header a client sends: ``Authorization: Bearer <token>`` (``token`` or the
    environment variable's), or none without a token."""
    token = resolve_token(token)
    return {"Authorization": f"Bearer {token}"} if token else {}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is reachable only from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def check_bind(host: str, token: str | None, insecure: bool) -> None:
    """Refuse to serve on a non-loopback ``host`` without a token unless ``insecure``: every env,
    the Coding sandbox included, would be open to anyone who reaches the port."""
    if not token and not insecure and not is_loopback(host):
        raise InsecureBind(f"refusing to serve on {host!r} without a token: anyone who reaches the port could run "
                           f"the env (the Coding sandbox included). Set {TOKEN_ENV} (or pass --token), or pass "
                           f"--insecure to serve without one")


class TokenGate:
    """ASGI middleware: a request (HTTP or a WebSocket handshake) to any path but
    :data:`OPEN_PATHS` without ``Authorization: Bearer <token>`` is refused before the app sees
    it: HTTP 401 ``UNAUTHORIZED``; a WebSocket handshake gets the same 401 where the server
    supports denial responses, else it is closed (HTTP 403) before it is accepted."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("TokenGate needs a non-empty token")
        self.app = app
        self._token = token.encode()

    def authorized(self, scope: Scope) -> bool:
        """Whether the request's ``Authorization`` header carries the token (compared in constant time)."""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Any]],
                       send: Callable[[Any], Awaitable[None]]) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS or self.authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"detail": "a valid bearer token is required (Authorization: Bearer ...)",
                           "code": "UNAUTHORIZED"}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"www-authenticate", b"Bearer")]
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", "status": 401, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

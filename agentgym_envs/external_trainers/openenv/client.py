"""Clients of a served agentgym env.

- :class:`RemoteEnv`: a gymnasium-like, synchronous client over OpenEnv's WebSocket protocol
  (``/ws``): ``reset(seed=, task_id=, split=) -> (text, info)`` and
  ``step(action) -> (text, reward, terminated, truncated, info)``, with ``info["messages"]``,
  ``info["metrics"]`` and ``tool_schemas`` as in process. One connection is one session.

Every client here sends the server's bearer token when it has one: its ``token`` argument, else
the environment variable ``AGENTGYM_SERVE_TOKEN``.

It needs only ``websockets`` (no OpenEnv import, which takes seconds); OpenEnv's own typed client
for these envs is :class:`agentgym_envs.external_trainers.openenv.openenv_client.AgentGymEnvClient`.
"""

from __future__ import annotations

import contextlib
import json
import urllib.request
from typing import Any

from .auth import auth_headers


class RemoteEnvError(RuntimeError):
    """The server answered a request with an error: ``code`` is OpenEnv's error code
    (``CAPACITY_REACHED``, ``VALIDATION_ERROR``, ``EXECUTION_ERROR``, ...)."""

    def __init__(self, code: str, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data or {}


class CapacityReached(RemoteEnvError):
    """The server already holds its maximum of sessions."""


class Unauthorized(RemoteEnvError):
    """The server wants a bearer token and the client sent none or a wrong one."""


def ws_url(base_url: str) -> str:
    """``http://host:port`` -> ``ws://host:port/ws`` (``https`` -> ``wss``)."""
    url = base_url.rstrip("/")
    if url.startswith("http"):
        url = "ws" + url[4:]
    return url if url.endswith("/ws") else url + "/ws"


def http_url(base_url: str) -> str:
    url = base_url.rstrip("/").removesuffix("/ws")
    return "http" + url[2:] if url.startswith("ws") else url


def request_json(base_url: str, path: str, body: dict[str, Any] | None = None, method: str | None = None,
                 timeout: float = 30.0, token: str | None = None) -> Any:
    """One HTTP request to the server with the bearer token (``token`` or the environment
    variable's); the JSON answer (an error status raises ``HTTPError``)."""
    data = None if body is None else json.dumps(body).encode()
    method = method or ("GET" if body is None else "POST")
    request = urllib.request.Request(http_url(base_url) + path, data=data, method=method,
                                     headers={"content-type": "application/json", **auth_headers(token)})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def tool_schemas(base_url: str, token: str | None = None) -> list[dict[str, Any]]:
    """The served env's tool schemas (from a stateless ``POST /reset``)."""
    return request_json(base_url, "/reset", {}, token=token)["observation"]["tool_schemas"]


def action_payload(action: Any) -> dict[str, Any]:
    """An action for the wire: a reply string as ``{"text": ...}``; a tool call (``{"name",
    "arguments"}`` or OpenAI's ``{"type": "function", "function": {...}}``) with dict arguments
    as ``{"tool_call": ...}``; any other dict as its JSON text, which the env parses."""
    if isinstance(action, str):
        return {"text": action}
    if hasattr(action, "model_dump"):  # an AgentGymAction
        return action.model_dump(exclude_none=True, exclude={"metadata"})
    if isinstance(action, dict):
        call = action.get("function", action) if action.get("type") == "function" else action
        if set(call) <= {"name", "arguments"} and isinstance(call.get("name"), str) \
                and isinstance(call.get("arguments", {}), dict):
            return {"tool_call": {"name": call["name"], "arguments": call.get("arguments", {})}}
        return {"text": json.dumps(action)}
    raise TypeError(f"an action is a reply string or a tool-call dict, got {type(action).__name__}")


class RemoteEnv:
    """One session of a served env, used like the env in text mode. ``token``: the server's
    bearer token (default: ``AGENTGYM_SERVE_TOKEN``'s value); a missing or wrong one raises
    :class:`Unauthorized`."""

    def __init__(self, base_url: str, timeout: float = 60.0, max_message_bytes: int = 64 << 20,
                 token: str | None = None) -> None:
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        self.base_url = base_url
        try:
            self._ws = connect(ws_url(base_url), open_timeout=timeout, max_size=max_message_bytes,
                               compression=None, additional_headers=auth_headers(token))
        except InvalidStatus as exc:
            if exc.response.status_code in (401, 403):
                raise Unauthorized("UNAUTHORIZED", f"the server refused the session ({exc.response.status_code}): "
                                                   f"give it its token (token= or AGENTGYM_SERVE_TOKEN)") from None
            raise
        self._timeout = timeout
        self.tool_schemas: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []  # the conversation as of the last reset or step

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(json.dumps(message))
        except ConnectionClosed:
            pass  # the server closed the session; the reason is in the messages it sent first
        try:
            answer = json.loads(self._ws.recv(timeout=self._timeout))
        except ConnectionClosed as exc:
            raise RemoteEnvError("CONNECTION_CLOSED", f"the server closed the session ({exc})") from None
        if answer.get("type") == "error":
            data = answer.get("data", {})
            kind = CapacityReached if data.get("code") == "CAPACITY_REACHED" else RemoteEnvError
            raise kind(str(data.get("code")), str(data.get("message")), data)
        return answer["data"]

    @staticmethod
    def _unpack(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        observation = data["observation"]
        info = dict(observation["info"])
        info["messages"] = observation["messages"]
        if observation.get("metrics"):
            info["metrics"] = observation["metrics"]
        if observation.get("outcome") is not None:
            info["outcome"] = observation["outcome"]
        return observation["text"], info

    def reset(self, seed: int | None = None, task_id: str | None = None, split: str | None = None,
              options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start the task ``reset(seed=seed, options={"task_id": ...})`` starts in process."""
        data: dict[str, Any] = {}
        task_id = task_id if task_id is not None else (options or {}).get("task_id")
        for key, value in (("seed", seed), ("task_id", task_id), ("split", split)):
            if value is not None:
                data[key] = value
        answer = self._call({"type": "reset", "data": data})
        self.tool_schemas = answer["observation"]["tool_schemas"] or self.tool_schemas
        text, info = self._unpack(answer)
        self.messages = info["messages"]
        return text, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """One reply or tool call; the env's answer as ``env.step`` gives it."""
        answer = self._call({"type": "step", "data": action_payload(action)})
        text, info = self._unpack(answer)
        self.messages = info["messages"]
        observation = answer["observation"]
        return text, float(answer["reward"]), bool(observation["terminated"]), bool(observation["truncated"]), info

    def state(self) -> dict[str, Any]:
        return self._call({"type": "state"})

    def close(self) -> None:
        try:
            self._ws.send(json.dumps({"type": "close"}))
        except Exception:  # the server may be gone already
            pass
        self._ws.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._ws.close()

    def __enter__(self) -> RemoteEnv:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

"""An agentgym env served over OpenEnv's protocol: OpenEnv's routes (``/health``, ``/schema``,
``/metadata``, ``/reset``, ``/step``, ``/state``, ``/ws``) plus HTTP sessions (``/sessions``), a
session cap, an idle timeout, a per-step timeout, a bearer token and 4xx answers for bad input.

    agentgym serve math --port 8765 --max-sessions 8
    python -m agentgym_envs.external_trainers.openenv math --port 8765        # the same, without the CLI's imports

OpenEnv's ``/reset`` and ``/step`` are stateless (a fresh env per request); an episode lives in a
session: one WebSocket connection to ``/ws`` (OpenEnv's protocol, what its clients use), or an
HTTP session (``POST /sessions``, then ``/sessions/{id}/reset``, ``/sessions/{id}/step``,
``DELETE /sessions/{id}``). The routes are agentgym's own, built on OpenEnv's public types and
serialization (not on its server class's private session table). See docs/serve.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.serialization import deserialize_action
from openenv.core.env_server.types import (
    EnvironmentMetadata,
    HealthResponse,
    HealthStatus,
    ResetRequest,
    SchemaResponse,
    StepRequest,
    WSErrorCode,
)
from pydantic import ValidationError

from ... import resolve_env_id
from .auth import TokenGate, check_bind
from .models import AgentGymAction, AgentGymObservation, AgentGymState
from .sessions import AgentGymEnvironment, BadReset, ServeConfig, ServeError, default_inline, metadata_of
from .table import SessionTable
from .ws import play

MAX_BODY_BYTES = 1 << 20
"""The largest request body (and WebSocket message) the server reads."""


class BodyTooLarge(ServeError):
    status, code = 413, "BODY_TOO_LARGE"


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": message, "code": code, **extra})


def action_or_422(request: StepRequest) -> AgentGymAction | JSONResponse:
    try:
        return deserialize_action(request.action, AgentGymAction)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False)
        return JSONResponse(status_code=422, content={"detail": errors, "code": WSErrorCode.VALIDATION_ERROR.value})


def build_app(env: str, make_kwargs: dict[str, Any] | None = None, split: str = "train", max_sessions: int = 8,
              idle_timeout_s: float | None = 300.0, step_timeout_s: float | None = 30.0,
              max_body_bytes: int = MAX_BODY_BYTES, inline: bool | None = None, token: str | None = None) -> FastAPI:
    """The FastAPI app that serves ``env`` (a short name like ``math`` or a full id): one
    env instance per session, at most ``max_sessions`` at a time; a session idle for
    ``idle_timeout_s`` is closed; a step that runs longer than ``step_timeout_s`` is abandoned
    (its session is then unusable). ``inline``: run steps on the event loop (True) or on a
    worker thread per session (False); None chooses per env (:func:`~.sessions.default_inline`).
    ``token``: every request but ``GET /health`` must carry ``Authorization: Bearer <token>``.
    ``make_kwargs`` go to ``gym.make`` (e.g. ``data_dir``)."""
    env_id, make_kwargs = resolve_env_id(env), dict(make_kwargs or {})
    inline = default_inline(env_id, make_kwargs) if inline is None else inline
    config = ServeConfig(env_id, make_kwargs, split, step_timeout_s, inline)
    AgentGymEnvironment(config).close()  # a bad env id or argument fails here, before the server listens
    factory = functools.partial(AgentGymEnvironment, config)
    table = SessionTable(factory, max_sessions, idle_timeout_s)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        table.start()
        try:
            yield
        finally:
            await table.stop()  # every env closed (Coding's sandboxes stopped)

    app = FastAPI(title=f"agentgym {env_id} (OpenEnv)", version="0", lifespan=lifespan)
    app.state.serve_config, app.state.sessions = config, table
    if token:
        app.add_middleware(TokenGate, token=token)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_body_bytes):
            return error_response(413, BodyTooLarge.code, f"the request body exceeds {max_body_bytes} bytes")
        return await call_next(request)

    @app.exception_handler(ServeError)
    async def serve_error(_: Request, exc: ServeError) -> JSONResponse:
        return error_response(exc.status, exc.code, str(exc))

    @app.exception_handler(SessionCapacityError)
    async def capacity_error(_: Request, exc: SessionCapacityError) -> JSONResponse:
        return error_response(503, WSErrorCode.CAPACITY_REACHED.value, str(exc), active_sessions=exc.active_sessions,
                              max_sessions=exc.max_sessions)

    @app.exception_handler(EnvironmentFactoryError)
    async def factory_error(_: Request, exc: EnvironmentFactoryError) -> JSONResponse:
        return error_response(500, WSErrorCode.FACTORY_ERROR.value, str(exc))

    # ------------------------------------------------------------------ OpenEnv's routes
    @app.get("/health", tags=["Health"])
    async def health() -> HealthResponse:
        return HealthResponse(status=HealthStatus.HEALTHY)

    @app.get("/schema", tags=["Schema"])
    async def schema() -> SchemaResponse:
        """The JSON schemas of the action, the observation (of a step and of a reset) and the state."""
        return SchemaResponse(action=AgentGymAction.model_json_schema(),
                              observation=AgentGymObservation.model_json_schema(),
                              reset_observation=AgentGymObservation.model_json_schema(),
                              state=AgentGymState.model_json_schema())

    @app.get("/metadata", tags=["Environment Info"])
    async def metadata() -> EnvironmentMetadata:
        return metadata_of(config)

    async def with_fresh_env(call: Any) -> Any:
        """``call(env)`` on a fresh session env, closed after (OpenEnv's stateless routes)."""
        fresh = await asyncio.to_thread(factory)
        try:
            return await call(fresh)
        finally:
            fresh.close()

    @app.post("/reset", tags=["Environment Control"])
    async def stateless_reset(request: ResetRequest | None = None) -> Any:
        """A task's opening (and the tool schemas), from a fresh env."""
        arguments = request.model_dump(exclude_unset=True) if request is not None else {}
        return await with_fresh_env(lambda fresh: fresh.reset_wire(**arguments))

    @app.post("/step", tags=["Environment Control"])
    async def stateless_step(request: StepRequest) -> Any:
        """OpenEnv's stateless step: a fresh env has no episode, so this answers 409 (use a session)."""
        action = action_or_422(request)
        if isinstance(action, JSONResponse):
            return action
        return await with_fresh_env(lambda fresh: fresh.step_wire(action))

    @app.get("/state", tags=["State Management"])
    async def stateless_state() -> dict[str, Any]:
        return AgentGymState(env_id=env_id).model_dump()

    @app.websocket("/ws")
    async def websocket_session(websocket: WebSocket) -> None:
        await play(websocket, table)

    # ------------------------------------------------------------------ agentgym's HTTP sessions
    @app.get("/sessions", tags=["Sessions"])
    async def capacity() -> dict[str, int]:
        """Open sessions and the cap."""
        return {"active_sessions": table.active, "max_sessions": table.max_sessions}

    @app.post("/sessions", status_code=201, tags=["Sessions"])
    async def open_session() -> dict[str, str]:
        """Open a session (503 ``CAPACITY_REACHED`` when the cap is reached)."""
        session_id, _ = await table.open()
        return {"session_id": session_id}

    @app.post("/sessions/{session_id}/reset", tags=["Sessions"])
    async def session_reset(session_id: str, request: ResetRequest | None = None) -> Any:
        """Start an episode: ``seed``, ``task_id``, ``split`` as in process."""
        session = table.get(session_id)
        arguments = request.model_dump(exclude_unset=True) if request is not None else {}
        table.touch(session_id)
        payload = await session.reset_wire(**arguments)
        table.touch(session_id)
        return payload

    @app.post("/sessions/{session_id}/step", tags=["Sessions"])
    async def session_step(session_id: str, request: StepRequest) -> Any:
        """One agent turn: ``{"action": {"text": ...}}`` or ``{"action": {"tool_call": {...}}}``."""
        session = table.get(session_id)
        action = action_or_422(request)
        if isinstance(action, JSONResponse):
            return action
        table.touch(session_id)
        payload = await session.step_wire(action)
        table.touch(session_id)
        return payload

    @app.get("/sessions/{session_id}/state", tags=["Sessions"])
    async def session_state(session_id: str) -> Any:
        return table.get(session_id).state.model_dump()

    @app.delete("/sessions/{session_id}", tags=["Sessions"])
    async def close_session(session_id: str) -> dict[str, Any]:
        table.get(session_id)
        table.close(session_id)
        return {"session_id": session_id, "closed": True}

    return app


def serve(env: str, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning", token: str | None = None,
          insecure: bool = False, loop: str = "auto", **app_kwargs: Any) -> None:
    """Serve ``env`` with uvicorn until interrupted, on uvicorn's event ``loop`` (``auto``: uvloop where
    installed). A non-loopback ``host`` needs a ``token`` unless ``insecure`` (:class:`~.auth.InsecureBind`
    otherwise)."""
    import sys

    import uvicorn

    check_bind(host, token, insecure)
    # A step on a worker thread hops from the event loop to it and back; with Python's default
    # 5 ms GIL switch interval a busy loop can hold a finished worker's answer that long.
    sys.setswitchinterval(float(os.environ.get("AGENTGYM_SERVE_SWITCH_INTERVAL", "0.0005")))
    app = build_app(env, token=token, **app_kwargs)
    max_body = app_kwargs.get("max_body_bytes", MAX_BODY_BYTES)
    uvicorn.run(app, host=host, port=port, log_level=log_level, loop=loop, ws_max_size=max_body,
                ws_ping_interval=20, ws_ping_timeout=20)


__all__ = ["BadReset", "MAX_BODY_BYTES", "build_app", "serve"]

"""An agentgym env served over OpenEnv: OpenEnv's own server (``/health``, ``/schema``,
``/metadata``, ``/reset``, ``/step``, ``/state``, ``/ws``) plus HTTP sessions
(``/sessions``), a session cap, an idle timeout, a per-step timeout and 4xx answers for bad input.

    agentgym serve math --port 8765 --max-sessions 8
    python -m agentgym_envs.serve math --port 8765        # the same, without the CLI's imports

OpenEnv's ``/reset`` and ``/step`` are stateless (a fresh env per request); an episode lives in a
session: one WebSocket connection to ``/ws`` (OpenEnv's protocol, what its clients use), or an
HTTP session (``POST /sessions``, then ``/sessions/{id}/reset``, ``/sessions/{id}/step``,
``DELETE /sessions/{id}``). See docs/serve.md.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.serialization import deserialize_action, serialize_observation
from openenv.core.env_server.types import ConcurrencyConfig, ResetRequest, StepRequest, WSErrorCode
from pydantic import ValidationError

from .. import resolve_env_id
from .models import AgentGymAction, AgentGymObservation, AgentGymState
from .sessions import AgentGymEnvironment, BadReset, ServeConfig, ServeError

MAX_BODY_BYTES = 1 << 20
"""The largest request body (and WebSocket message) the server reads."""

log = logging.getLogger(__name__)


class UnknownSession(ServeError):
    status, code = 404, "UNKNOWN_SESSION"


class BodyTooLarge(ServeError):
    status, code = 413, "BODY_TOO_LARGE"


class SessionServer(HTTPEnvServer):
    """OpenEnv's server with an idle reaper that checks often enough for short timeouts
    (OpenEnv's own checks every ``max(timeout / 4, 5)`` seconds). This and the ``/sessions``
    routes use the server's session table (``_sessions``, ``_create_session``, ``_destroy_session``,
    ``_session_info``): private attributes of OpenEnv 0.10's ``HTTPEnvServer``, which the
    ``serve`` extra pins; ``tests/serve`` breaks first if a release changes them."""

    async def _reap_idle_sessions(self) -> None:
        timeout = self._session_idle_timeout_s
        if timeout is None:
            return
        interval = min(max(timeout / 4, 0.05), 5.0)
        while True:
            try:
                await asyncio.sleep(interval)
                now = time.time()
                async with self._session_lock:
                    attached = self._session_websocket_attachments
                    stale = [sid for sid, info in self._session_info.items()
                             if sid not in attached and now - info.last_activity_at > timeout]
                for sid in stale:
                    log.info("closing session %s: idle for more than %g s", sid, timeout)
                    await self._destroy_session(sid)
            except asyncio.CancelledError:
                break
            except Exception as exc:  # the reaper must outlive one bad close
                log.warning("idle-session reaper: %s", exc)


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse(status_code=status, content={"detail": message, "code": code, **extra})


def build_app(env: str, make_kwargs: dict[str, Any] | None = None, split: str = "train", max_sessions: int = 8,
              idle_timeout_s: float | None = 300.0, step_timeout_s: float | None = 30.0,
              max_body_bytes: int = MAX_BODY_BYTES, inline: bool = False) -> FastAPI:
    """The FastAPI app that serves ``env`` (a short name like ``math`` or a full id): one
    env instance per session, at most ``max_sessions`` at a time; a session idle for
    ``idle_timeout_s`` is closed; a step that runs longer than ``step_timeout_s`` is abandoned
    (its session is then unusable); ``inline`` runs steps on the event loop instead (faster for
    fast envs, no step timeout: see ``ServeConfig``). ``make_kwargs`` go to ``gym.make`` (e.g. ``data_dir``)."""
    config = ServeConfig(resolve_env_id(env), dict(make_kwargs or {}), split, step_timeout_s, inline)
    AgentGymEnvironment(config).close()  # a bad env id or argument fails here, before the server listens
    app = FastAPI(title=f"agentgym {config.env_id} (OpenEnv)", version="0")
    server = SessionServer(functools.partial(AgentGymEnvironment, config), AgentGymAction, AgentGymObservation,
                           concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                                session_timeout=idle_timeout_s),
                           env_name=config.env_id.split("/")[-1], state_cls=AgentGymState)
    server.register_routes(app)
    app.state.openenv_server = server

    async def close_all_sessions() -> None:  # at shutdown: every env closed (Coding's sandboxes stopped)
        for session_id in list(server._sessions):
            await server._destroy_session(session_id)

    app.router.on_shutdown.append(close_all_sessions)
    app.state.serve_config = config

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

    def session(session_id: str) -> AgentGymEnvironment:
        found = server._sessions.get(session_id)
        if found is None:
            raise UnknownSession(f"no session {session_id!r} (never opened, closed, or closed after idling "
                                 f"{idle_timeout_s} s)")
        assert isinstance(found, AgentGymEnvironment)
        return found

    @app.get("/sessions", tags=["Sessions"])
    async def capacity() -> dict[str, int]:
        """Open sessions and the cap."""
        status = server.get_capacity_status()
        return {"active_sessions": status.active_sessions, "max_sessions": status.max_sessions}

    @app.post("/sessions", status_code=201, tags=["Sessions"])
    async def open_session() -> dict[str, str]:
        """Open a session (503 ``CAPACITY_REACHED`` when the cap is reached)."""
        session_id, _ = await server._create_session()
        return {"session_id": session_id}

    @app.post("/sessions/{session_id}/reset", tags=["Sessions"])
    async def session_reset(session_id: str, request: ResetRequest | None = None) -> Any:
        """Start an episode: ``seed``, ``task_id``, ``split`` as in process."""
        env = session(session_id)
        server._update_session_activity(session_id)
        arguments = request.model_dump(exclude_unset=True) if request is not None else {}
        observation = await env.reset_async(**arguments)
        server._update_session_activity(session_id)
        return serialize_observation(observation)

    @app.post("/sessions/{session_id}/step", tags=["Sessions"])
    async def session_step(session_id: str, request: StepRequest) -> Any:
        """One agent turn: ``{"action": {"text": ...}}`` or ``{"action": {"tool_call": {...}}}``."""
        env = session(session_id)
        try:
            action = deserialize_action(request.action, AgentGymAction)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False)
            return JSONResponse(status_code=422, content={"detail": errors, "code": WSErrorCode.VALIDATION_ERROR.value})
        server._update_session_activity(session_id)
        observation = await env.step_async(action)
        server._update_session_activity(session_id, increment_step=True)
        return serialize_observation(observation)

    @app.get("/sessions/{session_id}/state", tags=["Sessions"])
    async def session_state(session_id: str) -> Any:
        return session(session_id).state.model_dump()

    @app.delete("/sessions/{session_id}", tags=["Sessions"])
    async def close_session(session_id: str) -> dict[str, Any]:
        session(session_id)
        await server._destroy_session(session_id)
        return {"session_id": session_id, "closed": True}

    return app


def serve(env: str, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning", **app_kwargs: Any) -> None:
    """Serve ``env`` with uvicorn until interrupted."""
    import sys

    import uvicorn

    # Each step hops from the event loop to its session's worker thread and back; with Python's
    # default 5 ms GIL switch interval a busy loop can hold a finished worker's answer that long.
    sys.setswitchinterval(float(os.environ.get("AGENTGYM_SERVE_SWITCH_INTERVAL", "0.0005")))
    app = build_app(env, **app_kwargs)
    max_body = app_kwargs.get("max_body_bytes", MAX_BODY_BYTES)
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws_max_size=max_body, ws_ping_interval=20,
                ws_ping_timeout=20)


__all__ = ["BadReset", "MAX_BODY_BYTES", "build_app", "serve"]

"""``/ws``: a session over OpenEnv's WebSocket protocol, served from agentgym's session table.

The client sends ``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": <action>}``,
``{"type": "state"}`` or ``{"type": "close"}``; the server answers ``{"type": "observation",
"data": {"observation", "reward", "done"}}``, ``{"type": "state", "data": ...}`` or ``{"type":
"error", "data": {"message", "code"}}`` with OpenEnv's error codes. The connection is the
session, or it attaches to an HTTP session (``/ws?session_id=...``). This is the protocol of
OpenEnv's ``HTTPEnvServer`` (0.9, 0.10), answered without its private session table.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import orjson
from fastapi import WebSocket, WebSocketDisconnect
from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError
from openenv.core.env_server.serialization import deserialize_action
from openenv.core.env_server.types import WSErrorCode
from pydantic import ValidationError

from .models import AgentGymAction
from .sessions import AgentGymEnvironment
from .table import SessionTable


def error(message: str, code: WSErrorCode, **extra: Any) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code.value, **extra}})


LONG_NUMBER = re.compile(r"\d{19}")
"""A run of digits orjson may not read as :mod:`json` does (it makes an integer beyond 64 bits a float)."""


def parse(raw: str) -> Any:
    """A client's message as :func:`json.loads` reads it (its errors too): orjson where it
    reads the same (not where it refuses, e.g. ``NaN``, or a number may exceed 64 bits), json else."""
    if LONG_NUMBER.search(raw) is None:
        with contextlib.suppress(orjson.JSONDecodeError):
            return orjson.loads(raw)
    return json.loads(raw)


def observation_message(payload: dict[str, Any]) -> str:
    """The answer to a reset or a step (orjson: the whole conversation goes out every step)."""
    return orjson.dumps({"type": "observation", "data": payload}).decode()


async def answer(env: AgentGymEnvironment, kind: Any, message: dict[str, Any]) -> str:
    """The answer to one message of a known session (``close`` is handled by the caller)."""
    data = message.get("data", {})
    if kind in ("reset", "step") and not isinstance(data, dict):
        return error("Invalid message: data must be an object", WSErrorCode.VALIDATION_ERROR)
    try:
        if kind == "reset":
            return observation_message(await env.reset_wire(**data))
        if kind == "step":
            return observation_message(await env.step_wire(deserialize_action(data, AgentGymAction)))
        if kind == "state":
            return json.dumps({"type": "state", "data": env.state.model_dump()})
    except ValidationError as exc:
        return error("Invalid message", WSErrorCode.VALIDATION_ERROR,
                     errors=json.loads(exc.json(include_url=False, include_context=False)))
    except Exception as exc:  # the env's own refusal (a wrong reset, a step after the end, a timeout)
        return error(str(exc), WSErrorCode.EXECUTION_ERROR)
    return error(f"Unknown message type: {kind}", WSErrorCode.UNKNOWN_TYPE)


async def play(websocket: WebSocket, table: SessionTable) -> None:
    """Serve one WebSocket connection until the client closes it or sends ``close``."""
    await websocket.accept()
    session_id, owned, farewell = None, False, None
    try:
        requested = websocket.query_params.get("session_id")
        if requested:
            env, session_id = table.attach(requested), requested
        else:
            (session_id, env), owned = await table.open(), True
        while True:
            raw = await websocket.receive_text()
            try:
                message = parse(raw)
            except json.JSONDecodeError as exc:
                await websocket.send_text(error(f"Invalid JSON: {exc}", WSErrorCode.INVALID_JSON))
                continue
            kind = message.get("type", "") if isinstance(message, dict) else None
            if kind == "close":
                break
            if kind is None:
                reply = error("Invalid message: a message is a JSON object", WSErrorCode.VALIDATION_ERROR)
            else:
                table.touch(session_id)
                reply = await answer(env, kind, message)
                table.touch(session_id)
            await websocket.send_text(reply)
    except WebSocketDisconnect:
        pass
    except SessionCapacityError as exc:
        farewell = error(str(exc), WSErrorCode.CAPACITY_REACHED, active_sessions=exc.active_sessions,
                         max_sessions=exc.max_sessions)
    except EnvironmentFactoryError as exc:
        farewell = error(str(exc), WSErrorCode.FACTORY_ERROR, factory_name=exc.factory_name)
    except Exception as exc:
        farewell = error(str(exc), WSErrorCode.SESSION_ERROR)
    finally:
        if owned and session_id is not None:
            table.close(session_id)
        elif session_id is not None:
            table.detach(session_id)
        with contextlib.suppress(RuntimeError, WebSocketDisconnect, OSError):
            if farewell is not None:
                await websocket.send_text(farewell)
            await websocket.close()

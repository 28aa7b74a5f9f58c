"""The server's session table: one :class:`~agentgym_envs.external_trainers.openenv.sessions.AgentGymEnvironment` per
session, at most ``max_sessions`` at a time, sessions idle for ``idle_timeout_s`` closed.

The table is agentgym's own (OpenEnv's server keeps its table in private members); its errors
are OpenEnv's public ones (``SessionCapacityError``, ``EnvironmentFactoryError``), so clients see
OpenEnv's codes. Every method runs on the server's event loop, which is what keeps the counts
consistent without a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable

from openenv.core.env_server.exceptions import EnvironmentFactoryError, SessionCapacityError

from .sessions import AgentGymEnvironment, ServeError

log = logging.getLogger(__name__)


class UnknownSession(ServeError):
    status, code = 404, "UNKNOWN_SESSION"


class SessionTable:
    """Open sessions by id. A session attached to a WebSocket (``/ws?session_id=...``) is not
    reaped while the socket is open; one a WebSocket opened itself is, like an HTTP session."""

    def __init__(self, factory: Callable[[], AgentGymEnvironment], max_sessions: int,
                 idle_timeout_s: float | None) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        if idle_timeout_s is not None and idle_timeout_s <= 0:
            raise ValueError(f"idle_timeout_s must be positive or None, got {idle_timeout_s}")
        self.factory = factory
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self._sessions: dict[str, AgentGymEnvironment] = {}
        self._last_activity: dict[str, float] = {}
        self._attached: set[str] = set()
        self._opening = 0  # sessions whose env is being made: they count against the cap
        self._reaper: asyncio.Task[None] | None = None

    @property
    def active(self) -> int:
        """Sessions open or opening."""
        return len(self._sessions) + self._opening

    async def open(self) -> tuple[str, AgentGymEnvironment]:
        """A new session and its env (made on a thread: ``gym.make`` may take a while)."""
        if self.active >= self.max_sessions:
            raise SessionCapacityError(self.active, self.max_sessions)
        self._opening += 1
        try:
            env = await asyncio.to_thread(self.factory)
        except ServeError:
            raise
        except Exception as exc:
            raise EnvironmentFactoryError("AgentGymEnvironment", f"the session's env could not be made: {exc}") \
                from exc
        finally:
            self._opening -= 1
        session_id = str(uuid.uuid4())
        self._sessions[session_id] = env
        self._last_activity[session_id] = time.monotonic()
        return session_id, env

    def get(self, session_id: str) -> AgentGymEnvironment:
        """The session's env; :class:`UnknownSession` (404) if it is not open."""
        env = self._sessions.get(session_id)
        if env is None:
            timeout = f"{self.idle_timeout_s:g} s" if self.idle_timeout_s is not None else "never"
            raise UnknownSession(f"no session {session_id!r} (never opened, closed, or closed after idling; "
                                 f"idle timeout: {timeout})")
        return env

    def touch(self, session_id: str) -> None:
        """Mark the session active now (a request arrived or was answered)."""
        if session_id in self._last_activity:
            self._last_activity[session_id] = time.monotonic()

    def attach(self, session_id: str) -> AgentGymEnvironment:
        """Hand an open session to a WebSocket: one socket at a time, and no idle reaping meanwhile."""
        if session_id not in self._sessions:
            raise UnknownSession(f"Unknown session_id: {session_id}")
        if session_id in self._attached:
            raise ServeError(f"Session {session_id} already has an attached WebSocket")
        self._attached.add(session_id)
        self.touch(session_id)
        return self._sessions[session_id]

    def detach(self, session_id: str) -> None:
        self._attached.discard(session_id)
        self.touch(session_id)

    def close(self, session_id: str) -> bool:
        """Close the session and its env (without waiting for a step still running); whether it was open."""
        env = self._sessions.pop(session_id, None)
        self._last_activity.pop(session_id, None)
        self._attached.discard(session_id)
        if env is None:
            return False
        env.close()
        return True

    def close_all(self) -> None:
        for session_id in list(self._sessions):
            self.close(session_id)

    def idle(self, now: float) -> list[str]:
        """Sessions idle for longer than the timeout at ``now`` (``time.monotonic()``)."""
        if self.idle_timeout_s is None:
            return []
        return [sid for sid, last in self._last_activity.items()
                if sid not in self._attached and now - last > self.idle_timeout_s]

    async def reap_forever(self) -> None:
        """Close idle sessions, checking every quarter of the timeout (between 0.05 and 5 s)."""
        assert self.idle_timeout_s is not None
        interval = min(max(self.idle_timeout_s / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            for session_id in self.idle(time.monotonic()):
                log.info("closing session %s: idle for more than %g s", session_id, self.idle_timeout_s)
                self.close(session_id)

    def start(self) -> None:
        """Start the idle reaper (on the running loop); a no-op without a timeout."""
        if self.idle_timeout_s is not None and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self.reap_forever())

    async def stop(self) -> None:
        """Stop the reaper and close every session (at shutdown: Coding's sandboxes stopped)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        self.close_all()

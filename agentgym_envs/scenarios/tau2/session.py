"""The world of one tau2 episode: the database, the simulated user, and what the agent did."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .upstream.toolkit import Tau2World
from .user import UserSimulator


@dataclass
class Tau2Session(Tau2World[Any]):
    """One episode's state. ``calls`` holds every call that reached a tool, in order
    (``(name, arguments)`` for the agent's, ``(name, arguments, "user")`` for the user's
    phone in a dual-control domain; errors included: the evaluator replays the writes);
    ``agent_messages`` the agent's messages to the user (COMMUNICATE reads them);
    ``drafts`` the lists being built by the list-builder tools, by list kind;
    ``plan`` the scripted expert's calls for this task, ``reference_writes`` the keys of
    the task's reference write calls, ``reference_actions`` its reference calls of the agent
    (upstream's evaluation actions, reads and writes), ``score`` the :class:`Tau2Score` once graded;
    ``transcript`` the conversation as ``(role, content)`` turns (user, assistant, tool),
    which an NL-assertion judge reads. ``user`` is the rule-based
    :class:`~.user.UserSimulator` or an :class:`~.llm_user.LLMUser`."""

    user: UserSimulator | Any = None
    calls: list[tuple[Any, ...]] = field(default_factory=list)
    agent_calls: int = 0  # how many of ``calls`` the agent made
    agent_messages: list[str] = field(default_factory=list)
    drafts: dict[str, list[Any]] = field(default_factory=dict)
    plan: list[Any] = field(default_factory=list)
    reference_writes: frozenset[str] = frozenset()
    reference_actions: tuple[Any, ...] = ()
    score: Any = None
    transferred: bool = False
    transcript: list[tuple[str, str]] = field(default_factory=list)

    @property
    def user_error(self) -> str | None:
        """Why the simulated user could not go on (an LLM user's endpoint failed), or None."""
        return getattr(self.user, "error", None)

    @property
    def ended_normally(self) -> bool:
        """Whether the user or the agent (by a transfer) ended the conversation; a user
        simulator that failed did not end it."""
        if self.user_error is not None:
            return False
        return self.transferred or (self.user is not None and self.user.stopped)

"""OpenEnv's typed ``EnvClient`` for a served agentgym env, for code written against OpenEnv's client API."""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .auth import auth_headers
from .client import action_payload
from .models import AgentGymAction, AgentGymObservation, AgentGymState


class AgentGymEnvClient(EnvClient[AgentGymAction, AgentGymObservation, AgentGymState]):
    """OpenEnv's ``EnvClient`` for a served agentgym env::

        with AgentGymEnvClient(base_url="http://127.0.0.1:8765").sync() as client:
            result = client.reset(seed=0)
            result = client.step(AgentGymAction(text='{"name": "submit_answer", "arguments": {"value": 3}}'))

    ``token``: the server's bearer token (default: ``AGENTGYM_SERVE_TOKEN``'s value), sent as
    ``Authorization: Bearer ...`` beside any ``headers``; the other arguments are ``EnvClient``'s.
    """

    def __init__(self, base_url: str | None = None, *, token: str | None = None,
                 headers: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(base_url=base_url, headers={**auth_headers(token), **(headers or {})} or None, **kwargs)

    def _step_payload(self, action: AgentGymAction) -> dict[str, Any]:
        return action_payload(action)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[AgentGymObservation]:
        observation = AgentGymObservation(**{**payload["observation"], "reward": payload.get("reward"),
                                             "done": payload.get("done", False)})
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> AgentGymState:
        return AgentGymState(**payload)

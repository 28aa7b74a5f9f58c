"""agentgym environments served over OpenEnv (``agentgym serve``) and the clients that play them.

``app``: the server (OpenEnv's routes and WebSocket protocol on OpenEnv's public types, with
sessions, timeouts, a bearer token and 4xx answers); ``sessions``: one session's env; ``table``:
the session table; ``ws``: the ``/ws`` protocol; ``auth``: the token; ``client``:
:class:`~agentgym_envs.external_trainers.openenv.client.RemoteEnv`, a gymnasium-like client over OpenEnv's WebSocket
protocol; ``openenv_client``: :class:`~agentgym_envs.external_trainers.openenv.openenv_client.AgentGymEnvClient`,
OpenEnv's typed ``EnvClient`` for these envs. Needs the ``serve`` extra (``openenv``).
"""

from __future__ import annotations

from .cli import add_arguments, run_from_args

__all__ = ["add_arguments", "run_from_args"]

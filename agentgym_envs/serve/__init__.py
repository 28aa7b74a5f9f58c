"""agentgym environments served over OpenEnv (``agentgym serve``) and the clients that play them.

``app``: the server (OpenEnv's ``HTTPEnvServer`` with sessions, timeouts and 4xx answers);
``client``: :class:`~agentgym_envs.serve.client.RemoteEnv`, a gymnasium-like client over
OpenEnv's WebSocket protocol, and :class:`~agentgym_envs.serve.client.AgentGymEnvClient`,
OpenEnv's typed ``EnvClient`` for these envs. Needs the ``serve`` extra (``openenv``).
"""

from __future__ import annotations

from .cli import add_arguments, run_from_args

__all__ = ["add_arguments", "run_from_args"]

"""PettingZoo environments: teams of tool-using agents (``support_team_v0``).

PettingZoo environments are made by importing their module, e.g. ``from agentgym_envs.multiagent
import support_team_v0``. For trainers and language models, the team's single-agent adapter (one
network or model acting for every agent in turn) is registered with gymnasium as ``AgentGym/SupportTeam-v0``.
"""

from . import support_team_v0

__all__ = ["support_team_v0"]

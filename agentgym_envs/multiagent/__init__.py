"""PettingZoo environments: teams of tool-using agents (``support_team_v0``).

PettingZoo environments are made by importing their module, e.g. ``from agentgym_envs.multiagent
import support_team_v0``. For trainers, the team's single-agent adapter (one network acting for
every agent) is registered with gymnasium as ``AgentGym/SupportTeam-v0``.
"""

from . import support_team_v0

__all__ = ["support_team_v0"]

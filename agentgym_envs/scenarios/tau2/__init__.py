"""The tau2-bench retail, airline and telecom domains.

- :mod:`.upstream`: the port of upstream's code (records, database, files, tasks, toolkit,
  per-domain models and tools, scoring), re-exported here;
- the agentgym adapter: the scenario base and the environments (``scenario``, ``env``),
  the episode's session and tools (``session``, ``episode_tools``), the simulated users
  (``user``, ``llm_user``), the scripted expert (``expert``), the leaderboard file
  (``leaderboard``), and one package per domain (``retail/``, ``airline/``: scenario,
  reveal, reads, list builders, generator; ``telecom/``: scenario and reveal).
"""

from . import upstream
from .upstream import *  # noqa: F403  (the port's public names, re-exported)

__all__ = list(upstream.__all__)

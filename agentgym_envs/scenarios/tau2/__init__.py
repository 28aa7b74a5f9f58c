"""The tau2-bench retail and airline domains.

- :mod:`.upstream`: the port of upstream's code (records, database, files, tasks, toolkit,
  per-domain models and tools, scoring), re-exported here;
- the agentgym adapter: the scenario base and the environments (``scenario``, ``env``),
  the episode's session and tools (``session``, ``episode_tools``), the simulated users
  (``user``, ``llm_user``), the scripted expert (``expert``), the leaderboard file
  (``leaderboard``), and one package per domain (``retail/``, ``airline/``: scenario,
  reveal, reads, list builders, generator).
"""

from .upstream import (
    AIRLINE,
    DATA_DIR_ENV,
    DOMAINS,
    RETAIL,
    CommunicateCheck,
    EvaluationCriteria,
    Tau2Action,
    Tau2DataError,
    Tau2DB,
    Tau2Domain,
    Tau2FormatError,
    Tau2MissingDataError,
    Tau2Score,
    Tau2SplitError,
    Tau2Task,
    Tau2TaskError,
    Tau2World,
    ToolOutcome,
    dict_hash,
    get_domain,
    gold_changes,
    gold_state,
    replay_writes,
    run_tool,
    score_episode,
)

__all__ = [
    "AIRLINE",
    "DATA_DIR_ENV",
    "DOMAINS",
    "RETAIL",
    "CommunicateCheck",
    "EvaluationCriteria",
    "Tau2Action",
    "Tau2DB",
    "Tau2DataError",
    "Tau2Domain",
    "Tau2FormatError",
    "Tau2MissingDataError",
    "Tau2Score",
    "Tau2SplitError",
    "Tau2Task",
    "Tau2TaskError",
    "Tau2World",
    "ToolOutcome",
    "dict_hash",
    "get_domain",
    "gold_changes",
    "gold_state",
    "replay_writes",
    "run_tool",
    "score_episode",
]

"""agentgym: Gymnasium environments in which an agent learns to use tools.

Importing the package registers every environment id with gymnasium.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from gymnasium.envs.registration import register, registry

from .levels import FAMILIES, base_env_id, family

__version__ = "0.1.0"


@dataclass(frozen=True)
class EnvEntry:
    """A registered environment: its id, short name, env class and scenario class paths."""

    env_id: str
    name: str
    entry_point: str
    scenario: str

    @property
    def stem(self) -> str:
        """The id without namespace and version (``CustomerSupport``)."""
        return self.env_id.split("/", 1)[1].rsplit("-", 1)[0]

    def scenario_class(self) -> type:
        module, _, attr = self.scenario.partition(":")
        return getattr(importlib.import_module(module), attr)


ENVIRONMENTS: tuple[EnvEntry, ...] = (
    EnvEntry(
        "AgentGym/CustomerSupport-v0",
        "customer_support",
        "agentgym_envs.scenarios.customer_support.env:CustomerSupportEnv",
        "agentgym_envs.scenarios.customer_support:CustomerSupportScenario",
    ),
    EnvEntry(
        "AgentGym/Math-v0",
        "math",
        "agentgym_envs.scenarios.math.env:MathEnv",
        "agentgym_envs.scenarios.math:MathScenario",
    ),
    EnvEntry(
        "AgentGym/Tau2Retail-v0",
        "tau2_retail",
        "agentgym_envs.scenarios.tau2.env:Tau2RetailEnv",
        "agentgym_envs.scenarios.tau2.retail.scenario:Tau2RetailScenario",
    ),
    EnvEntry(
        "AgentGym/Tau2Airline-v0",
        "tau2_airline",
        "agentgym_envs.scenarios.tau2.env:Tau2AirlineEnv",
        "agentgym_envs.scenarios.tau2.airline.scenario:Tau2AirlineScenario",
    ),
    EnvEntry(
        "AgentGym/Tau2Telecom-v0",
        "tau2_telecom",
        "agentgym_envs.scenarios.tau2.env:Tau2TelecomEnv",
        "agentgym_envs.scenarios.tau2.telecom.scenario:Tau2TelecomScenario",
    ),
    EnvEntry(
        "AgentGym/Coding-v0",
        "coding",
        "agentgym_envs.scenarios.coding.env:CodingEnv",
        "agentgym_envs.scenarios.coding:CodingScenario",
    ),
)


def resolve_env_id(name: str) -> str:
    """``customer_support`` (the family's latest version), ``CustomerSupport-v0``, a level's
    ``CustomerSupport-L0-v1`` or the full id -> the full env id."""
    for fam in FAMILIES:
        if name in (fam.name, fam.stem):
            return family(name).env_id
        for env_id in fam.ids():
            if name in (env_id, env_id.split("/", 1)[1]):
                return env_id
    for entry in ENVIRONMENTS:
        if name in (entry.env_id, entry.env_id.split("/", 1)[1]):
            return entry.env_id
    known = ", ".join(e.name for e in ENVIRONMENTS)
    raise ValueError(f"unknown environment {name!r}; known: {known}")


def success_criteria(env_id: str) -> dict[str, float]:
    """The success criteria of a registered environment's scenario, a level's those of its
    family ({} for other ids)."""
    stem = base_env_id(env_id).split("/", 1)[-1].rsplit("-", 1)[0]
    for entry in ENVIRONMENTS:
        if entry.stem == stem:
            return dict(entry.scenario_class().success_criteria)
    return {}


# A family with more than one version passes ``version`` to its env class at every id.
_VERSIONED = {fam.stem for fam in FAMILIES if fam.version > 0}


def _version_kwargs(stem: str, version: int) -> dict[str, int]:
    return {"version": version} if stem in _VERSIONED else {}


for _entry in ENVIRONMENTS:
    if _entry.env_id not in registry:
        register(id=_entry.env_id, entry_point=_entry.entry_point,
                 kwargs=_version_kwargs(_entry.stem, 0))

# The PettingZoo support team as one single-agent env (one network or language model acting for every
# agent in turn); the team itself is made with ``agentgym_envs.multiagent.support_team_v0``.
if "AgentGym/SupportTeam-v0" not in registry:
    register(id="AgentGym/SupportTeam-v0", entry_point="agentgym_envs.multiagent.support_team_v0:single_agent_env",
             kwargs=_version_kwargs("SupportTeam", 0))

# Every family's later versions and every version's levels: the family's entry point with
# ``version=n`` and ``level=k`` (see ``agentgym_envs.levels``).
for _family in FAMILIES:
    _entry_point = registry[f"AgentGym/{_family.stem}-v0"].entry_point
    if _family.env_id not in registry:
        register(id=_family.env_id, entry_point=_entry_point, kwargs=_version_kwargs(_family.stem, _family.version))
    for _level in _family.levels:
        if _level.env_id not in registry:
            register(id=_level.env_id, entry_point=_entry_point,
                     kwargs={"level": _level.index, **_version_kwargs(_family.stem, _family.version)})

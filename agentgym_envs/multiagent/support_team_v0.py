"""``support_team_v0``: a customer-support team resolves one ticket together (PettingZoo; the
environment is documented on :class:`SupportTeamParallelEnv`). The module keeps PettingZoo's
``_v0`` name; its task set has versions (``version=``, as ``AgentGym/CustomerSupport-v<n>``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from pettingzoo import AECEnv
from pettingzoo.utils.conversions import parallel_to_aec

from agentgym_envs.levels import check_version, with_level
from agentgym_envs.scenarios.customer_support import CustomerSupportScenario

from .env import ToolTeamParallelEnv
from .team import TeamScenario
from .wrappers import ActiveAgentEnv, AgentIdTokens

ROSTER: dict[str, tuple[str, ...]] = {
    "triage": ("lookup_user", "search_kb", "update_ticket"),
    "billing": ("check_payment", "refund", "send_email", "close_ticket"),
    "technical": ("check_logs", "create_api_key", "search_kb", "update_ticket", "escalate", "send_email", "close_ticket"),
    "accounts": ("lookup_user", "send_reset_link", "send_email", "close_ticket"),
}
TEAM_NOTE = (
    "You work in a team. Only the agent holding the ticket acts; the others wait. Call only "
    "the tools you hold; use handoff(to) to pass the ticket, the conversation and the entity "
    "table to the teammate who holds the tools the ticket needs next. Only specialists close tickets."
)


def support_team_scenario(kinds: Sequence[str] | None = None, category_hint: bool | float = False,
                          version: int = 1) -> TeamScenario:
    """The customer-support scenario (its ``kinds``, ``category_hint`` and task-set ``version``)
    played by the four-agent team of :data:`ROSTER`."""
    return TeamScenario(CustomerSupportScenario(kinds, category_hint, version), ROSTER, TEAM_NOTE)


class SupportTeamParallelEnv(ToolTeamParallelEnv):
    """A team of four agents resolves one customer-support ticket together.

    ## Description

    ```python
    from agentgym_envs.multiagent import support_team_v0
    env = support_team_v0.env()            # AEC
    penv = support_team_v0.parallel_env()  # Parallel
    ```

    The tickets, tools, world, grading, splits and seeds are those of
    ``AgentGym/CustomerSupport-v<n>`` at the same version (the team's scenario wraps the
    customer-support scenario, whose ticket generator it draws from, run by the core's
    ``Episode``); the team adds who may call what and a ``handoff`` pseudo-tool.

    | | |
    |---|---|
    | Import | `from agentgym_envs.multiagent import support_team_v0` |
    | Actions | structured (default) or text (JSON tool call), `action_mode=` |
    | Parallel API | yes (`parallel_env()`); `env()` is `parallel_to_aec(parallel_env())` |
    | Manual control | no |
    | Agents | `agents = ['triage', 'billing', 'technical', 'accounts']` |
    | Number of agents | 4 (all live until the episode ends, all end together) |
    | Action shape | structured: `MultiDiscrete([12, 36, 36])`; text: `Text(max_length=4096)` |
    | Action values | structured: [tool (11 tools + handoff), entity row, entity row]; text: `{"name": ..., "arguments": {...}}` |
    | Observation shape | `Dict(text=Text, action_mask=Tuple(MultiBinary(12), MultiBinary(36), MultiBinary(36)))`; text mode: `Dict(text=Text)` |
    | Observation values | the holder: its name and tools, the ticket, the conversation, the entity table; a waiting agent: who holds the ticket |

    ## Action Space

    See the table above (structured: the tool, 11 tools + `handoff`, then one entity row per
    argument; text: one tool call in any form language models write). **Agents and tools** (every agent also holds `handoff(to)`; `triage` starts with the ticket):

    | agent | tools |
    |---|---|
    | `triage` | `lookup_user`, `search_kb`, `update_ticket` |
    | `billing` | `check_payment`, `refund`, `send_email`, `close_ticket` |
    | `technical` | `check_logs`, `create_api_key`, `search_kb`, `update_ticket`, `escalate`, `send_email`, `close_ticket` |
    | `accounts` | `lookup_user`, `send_reset_link`, `send_email`, `close_ticket` |

    Only specialists close tickets, so every ticket kind needs at least one handoff; with the
    scripted expert team: password reset -> `accounts`, billing inquiry and refund ->
    `billing`, API integration and data migration -> `technical` (one handoff each).

    ## Observation Space

    **Observations.** `obs[agent]["text"]` (a `Text` space; the key is `text` and not
    `observation` because PettingZoo's checker reads a `dtype` from `obs["observation"]`, which a
    Python string lacks); in structured mode `obs[agent]["action_mask"]`, one int8 mask per action
    dimension, the form `action_space(agent).sample(mask)` takes: the holder's tools, and per
    argument slot the entity rows some tool it holds takes; all zeros for a waiting agent. Text
    mode has no mask (a `Text` space's mask is a character mask, which says nothing about tool
    calls), as in the single-agent contract. `TeamTokenIds` gives token ids instead of text.

    **The single-agent adapter** (`gym.make("AgentGym/SupportTeam-v1")`, every level's id too):
    each step is the ticket holder's call, for one network trained with parameter sharing
    (`observation="tokens"` or `"features"`, structured actions); with `action_mode="text"` its
    observation is the holder's text, its `info["messages"]` the conversation with the holder's
    header at the end of the system message, and its `tool_schemas` the holder's tools: one
    language model plays every agent in turn
    (`agentgym eval AgentGym/SupportTeam-L0-v1 --policy hf --model DIR`). Its tools change within an
    episode, so the integrations that give a model one tool list per episode (TRL's environment classes,
    verl's and SkyRL's agent loops, an OpenEnv session) refuse it with a clear error; `agentgym eval` and
    the suite's runners ask for the tools every turn.

    ## Rewards

    **Rewards** (the customer-support `RewardConfig`, `reward_config=` overrides it): each agent
    gets its own tool-choice reward for the calls it makes (+10 correct, -20 otherwise), and when
    the episode ends every agent gets the team outcome reward (+10 and up to +5 token efficiency
    and +3 speed on success, -5 on failure), computed from the team's metrics.

    ## Starting State

    `triage` holds the ticket. **Seeds.** `reset(seed=s)` draws the same ticket as
    `gym.make("AgentGym/CustomerSupport-v<n>", split=...).reset(seed=s)` at the same version
    and level; `options={"task_id": ...}` picks one.

    ## Episode End

    The ticket is closed (all agents terminate) or `max_cycles` team turns pass (all truncate).

    **Turns.** One cycle is one team turn: the agent holding the ticket makes one call (a tool
    or a handoff); the other agents wait. Parallel API: `step(actions)` runs the holder's
    action; waiting agents send no action (omit it or `None`); an action from a waiting agent is
    ignored and its info's `error` says it was out of turn (no reward, no effect). AEC API:
    every live agent takes one turn per cycle, in the order above, and the holder's action runs
    when the cycle completes; waiting agents pass `None`. A holder that sends no action makes
    an invalid turn. Calling a tool the agent does not hold, out-of-space actions and malformed
    JSON are error results, never exceptions.

    **Handoff.** `handoff(to)`, `to` an entity of kind `agent` (the four agents are rows 21-24 of
    the entity table from the start): the ticket moves to `to` and, the team sharing one
    episode, the conversation and the entity table go with it. Handing the ticket to its holder
    is an error result. A handoff is a correct tool choice when the holder lacks the tool of the
    expert's next call and `to` holds it (never for a repeat of an identical earlier handoff).

    ## Arguments

    **Arguments**: `version=1` (or 0: the task set, as in `AgentGym/CustomerSupport-v<n>`;
    the registered ids pass their own), `action_mode="structured"`, `split="train"` (or
    `"validation"` (v1), `"test"`), `task_file=None`,
    `reward_config=None`, `max_cycles=14` (team turns), `max_invalid_calls=None`,
    `history_turns=8`, `render_mode=None` (or `"ansi"`), `mask_repeats=False` (the masks also
    leave out calls identical to one already made, handoffs included); `level=None`, `kinds=None`,
    `category_hint=False` as in `AgentGym/CustomerSupport-v0` (see Levels). The registered
    single-agent ids (`AgentGym/SupportTeam-v1`, :func:`single_agent_env`) also take
    `observation` (`"tokens"` by default in structured mode, or `"features"`; `"text"` in text
    mode, its only one), `context_len=256` and `entity_len=12` (the tokens
    observation's lengths).

    ## Info and Metrics

    **Infos** (every agent, every step): `task_id`, `unit_id` (the ticket's phrasing), `cycle`, `holder`, `acted`, `tool_call`,
    `valid`, `correct`, `error`, `tokens_used` (this agent's), `team_tokens_used`, `messages`
    (the team conversation in OpenAI chat format; assistant messages carry the acting agent's
    `name`); the holder's also `parse` when its call was written as text (how it was written).
    At the end: `metrics` (this agent: `success`, `score` (the team's), `tool_reliability`,
    `turns`, `correct_calls`, `invalid_calls`, `handoffs`, `tokens_used`, `out_of_turn_actions`), `team_metrics` (the single-agent metrics of the whole team episode
    plus `handoffs`) and `outcome`.

    ## Levels

    `support_team_v0.env(level=k)` / `parallel_env(level=k)`, and for the single-agent adapter
    the id `AgentGym/SupportTeam-L<k>-v1`, restrict the ticket kinds and add a category line
    as `AgentGym/CustomerSupport-L<k>-v1` does (L4: on half the tickets, as there, to halve the
    fall from L3 to the top, at v0 0.91 -> 0.52 for the best trained test success); explicit
    arguments override the level's. Agents, tools and spaces are the same at every level and
    version. The splits and their units (the ticket's phrasing: 12 validation and 30 test
    units a kind at v1) are CustomerSupport's, see its page. Phrasing units per split (train /
    validation / test): v1 L0 186 / 12 / 30, L1 372 / 24 / 60, L2 744 / 48 / 120, L3, L4 and v1
    930 / 60 / 150; v0 (whole sentences, no validation) L0 6 / 3, L1 12 / 6, L2 24 / 12, L3 and
    v0 30 / 15.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (password-reset) | `AgentGym/SupportTeam-L0-v1` | password reset tickets only; a `Category:` line in the ticket | 14 |
    | 1 (easy) | `AgentGym/SupportTeam-L1-v1` | the easy kinds: password reset, billing inquiry; a `Category:` line in the ticket | 14 |
    | 2 (easy-medium) | `AgentGym/SupportTeam-L2-v1` | easy and medium kinds: + API integration, refund request; a `Category:` line in the ticket | 14 |
    | 3 (all-hinted) | `AgentGym/SupportTeam-L3-v1` | all five kinds (+ data migration); a `Category:` line in the ticket | 14 |
    | 4 (half-hinted) | `AgentGym/SupportTeam-L4-v1` | all five kinds; a `Category:` line in half the tickets (a fixed half, by task id) | 14 |
    | v1 | `AgentGym/SupportTeam-v1` | all five kinds, no category line | 14 |

    At v0 (`version=0`, `AgentGym/SupportTeam-L<k>-v0`):

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (password-reset) | `AgentGym/SupportTeam-L0-v0` | password reset tickets only; a `Category:` line in the ticket | 14 |
    | 1 (easy) | `AgentGym/SupportTeam-L1-v0` | the easy kinds: password reset, billing inquiry; a `Category:` line in the ticket | 14 |
    | 2 (easy-medium) | `AgentGym/SupportTeam-L2-v0` | easy and medium kinds: + API integration, refund request; a `Category:` line in the ticket | 14 |
    | 3 (all-hinted) | `AgentGym/SupportTeam-L3-v0` | all five kinds (+ data migration); a `Category:` line in the ticket | 14 |
    | v0 | `AgentGym/SupportTeam-v0` | all five kinds, no category line | 14 |

    ## Version History

    - v1: CustomerSupport-v1's tickets (a validation split, a phrasing grammar split by
      fragment); a level L4 with the category line on half the tickets.
    - v0: initial version; text actions in every form language models write; `info["parse"]`
      for the acting agent; levels L0-L3 (`level=`), `-v0` unchanged.
    """

    metadata = {**ToolTeamParallelEnv.metadata, "name": "support_team_v0"}

    def __init__(self, level: int | None = None, version: int = 1, **kwargs: Any) -> None:
        self.version = check_version("support_team", version)
        kwargs = with_level("support_team", level, kwargs, version=self.version)
        scenario = support_team_scenario(kwargs.pop("kinds", None), kwargs.pop("category_hint", False), self.version)
        super().__init__(scenario, **kwargs)
        self.level = level


def parallel_env(**kwargs: Any) -> SupportTeamParallelEnv:
    """The Parallel API environment (see the module docstring for the arguments)."""
    return SupportTeamParallelEnv(**kwargs)


def single_agent_env(context_len: int = 256, entity_len: int = 12, observation: str | None = None, **kwargs: Any) -> gym.Env:
    """The team as one gymnasium env for parameter-shared training, registered as
    ``AgentGym/SupportTeam-v1`` (and ``-v0``): each step is the ticket holder's call
    (:class:`~agentgym_envs.multiagent.wrappers.ActiveAgentEnv`). The observation: ``"tokens"``
    (the default in structured mode), ``[agent_id, *token ids]`` (through
    :class:`~agentgym_envs.multiagent.wrappers.AgentIdTokens`); ``"features"``, the features vector
    with the holder's one-hot; ``"text"`` (the default and the only one with ``action_mode="text"``),
    the holder's text, for one language model playing every agent. ``kwargs`` (``mask_repeats``
    among them) go to :func:`parallel_env`."""
    if observation is None:
        observation = "text" if kwargs.get("action_mode") == "text" else "tokens"
    active = ActiveAgentEnv(parallel_env(**kwargs), context_len=context_len, entity_len=entity_len, observation=observation)
    return AgentIdTokens(active) if observation == "tokens" else active


def env(**kwargs: Any) -> AECEnv:
    """The AEC API environment: :func:`parallel_env` through PettingZoo's ``parallel_to_aec``."""
    return parallel_to_aec(parallel_env(**kwargs))

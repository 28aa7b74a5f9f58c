"""``AgentGym/CustomerSupport-v1`` (and ``-v0``): the customer-support scenario run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.levels import check_version, with_level

from .scenario import CustomerSupportScenario


class CustomerSupportEnv(ToolUseEnv):
    """A support agent resolves a customer's ticket by calling tools, one call per step.

    ## Description

    Tickets are generated from a seed: names, emails, plans, invoices, amounts and logs, each
    split with value pools of its own, and the text from phrasings no other split uses (see
    Splits). Kinds:
    password reset and billing inquiry (easy); API integration, where the logs show a revoked
    key, a rate limit or a server error and each needs a different fix, and refund request, a
    duplicate charge among several invoices (medium); data migration (hard).

    Success is judged on the final state, not on a script: the account must show exactly the
    effects the ticket needs (the right refund on the right invoice for the full amount, the
    reset link to the right user, an escalation only where the ticket needs one, the right
    email, the right closing), in any order, with no other consequential effect.

    ## Action Space

    - `action_mode="structured"` (default): `MultiDiscrete([11 32 32])`, the tool, then one
      entity-table row per argument (tools with one argument ignore the last slot). Tools
      reveal new entities as they run (`lookup_user` adds the `user_id`, `check_payment` the
      invoices and amounts). An argument pointing at an empty row or a row of the wrong kind
      is a legal action with an error result and a penalty. `env.unwrapped.action_masks()`
      gives the per-dimension masks concatenated (MaskablePPO's form),
      `env.unwrapped.sample_mask()` the same split per dimension for
      `env.action_space.sample(mask=...)`.
    - `action_mode="text"`: `Text(max_length=4096)`, one tool call as a language model writes it (JSON, OpenAI
      `tool_calls` as a string or a dict, a fenced block in prose, `<tool_call>` tags, or
      `lookup_user(email="a@b.com")`); anything malformed is an error result and a penalty.

    Tools: `search_kb(topic)`, `update_ticket(priority)`, `lookup_user(email)`,
    `send_reset_link(user_id)`, `check_payment(user_id)`, `refund(invoice_id, amount)`,
    `create_api_key(user_id)`, `check_logs(user_id)`, `escalate(team)`,
    `send_email(user_id, template)`, `close_ticket(resolution)` (ends the episode).

    ## Observation Space

    `Text(max_length=14844)`: `TICKET <id>` and the customer's message, the conversation so
    far (`> call` / `< result`, the last `history_turns` turns), then `ENTITIES`, the
    numbered table of what the agent can refer to: topics, priorities, teams, templates and
    resolutions from the start, the customer's email, and what the tools reveal.

    With `observation="features"`: `Box(0, 1, (1438,), float32)`, the episode's state as one
    vector (its parts: the core `ToolUseEnv`'s docstring).

    ## Rewards

    Default `RewardConfig`: +10 for a correct tool choice and -20 for any other call; at the
    end +10 on success (or -5 on failure), plus on success up to +5 for token efficiency and
    up to +3 for speed (the fractions of the baseline's 500 tokens and 240 s saved). A call is
    a correct choice when it is one of the calls a resolution of this ticket needs and was not
    made before; closing the ticket counts only once it is resolved.
    `reward_config={"mode": "outcome"}` gives 0 per step and the outcome score (1 or 0) at
    the end.

    ## Starting State

    `reset(seed=s)` draws a ticket of `split`; `reset(options={"task_id": "validation-42"})` picks
    one by id (`"<split>-<index>"`). The conversation is empty; the entity table holds the
    enum values and the customer's email.

    ## Episode End

    Terminated when `close_ticket` runs. Truncated after `max_turns` (10) calls, or after
    `max_invalid_calls` invalid calls when that is set.

    ## Arguments

    `version` (1, the default, or 0: the task set, see Splits; the registered ids pass their
    own), `action_mode` (`"structured"` | `"text"`), `split` (`"train"` | `"validation"` (v1) |
    `"test"`), `task_file`
    (JSONL tickets; one line per ticket: `task_id`, `kind`, `text`, `customer` {`user_id`,
    `name`, `email`, `plan`}, optional `invoices` [{`invoice_id`, `amount`, `date`,
    `status` "paid" | "duplicate", `description`}], `logs`, optional `phrasing` (the unit id's
    second part), and `issue` (`auth`,
    `rate_limit` or `server_error`) for API tickets; a malformed line fails with its line
    number and field), `reward_config` (a `RewardConfig` or a dict of its fields),
    `max_turns`, `max_invalid_calls`, `history_turns` (8), `render_mode` (`"ansi"`),
    `observation` (`"text"` | `"features"`), `mask_repeats` (False: True masks calls already made); `level`
    (see Levels), `kinds` (the ticket kinds generated, default all five) and `category_hint`
    (a `Category: <kind>` line opens the ticket, as help desks tag tickets; default off; a
    fraction in [0, 1] hints that share of tickets, a fixed set chosen by a hash of the task id).

    ## Info and Metrics

    Every step: `task_id`, `unit_id` (the ticket's phrasing unit, see Splits), `turn`,
    `tool_call`, `valid`, `correct`, `error`, `tokens_used`, `messages` (OpenAI chat
    format); structured mode `action_mask` and `argument_mask`; text
    mode `parse` (the form the call was written in and the repairs it needed). At the end
    `outcome` (`success`, `score`, `reason`: a sentence saying what the resolution lacked or
    should not have done) and `metrics`: `success`, `score`, `tool_reliability`,
    `tokens_used`, `cost_reduction`, `time_savings`, `elapsed_s`, `turns`,
    `invalid_calls`, `correct_calls`. Success criteria (`agentgym list --detailed`): tool
    reliability >= 0.95, cost reduction >= 0.30, time savings >= 0.98.

    ## Splits

    The unit of generalisation is the ticket's phrasing (`info["unit_id"]`, e.g.
    `password_reset/s2-o1-c0`). At v1 a ticket's text is an opener, a statement of the kind's
    problem (holding its key word: password, invoice, API, refund, migration) and a closing
    clause with the email and name, and each split has its own openers, statements and closers,
    so no test fragment is ever seen in training; -v0's whole phrasings are units too (its 6
    train phrasings a kind in train, its 3 test phrasings in test, so v1's test split keeps
    v0's). Per kind: train 6 openers x 5 statements x 6 closers + 6 = 186 units, validation
    2 x 3 x 2 = 12, test 3 x 3 x 3 + 3 = 30. Names, email domains, plans and amounts, months,
    endpoints, migration sources and ids come from pools of each split's own (v1's train and
    test from v0's pools: a v1 train or test ticket has the kind and values of the v0 ticket of
    the same id, only its text differs). Units per split:

    | level | unit | train | validation | test |
    | --- | --- | --- | --- | --- |
    | v1 L0 | phrasing (kind, opener, statement, closer) | 186 | 12 | 30 |
    | v1 L1 | phrasing | 372 | 24 | 60 |
    | v1 L2 | phrasing | 744 | 48 | 120 |
    | v1 L3, L4, v1 | phrasing | 930 | 60 | 150 |
    | v0 L0 | phrasing (whole sentence) | 6 | - | 3 |
    | v0 L1 | phrasing | 12 | - | 6 |
    | v0 L2 | phrasing | 24 | - | 12 |
    | v0 L3, v0 | phrasing | 30 | - | 15 |

    ## Levels

    `level=k` (or the id `AgentGym/CustomerSupport-L<k>-v1`) sets `kinds` and `category_hint`
    as below; arguments given explicitly override the level's. The tools, entity table and
    action space are the same at every level and version; each split keeps its own values and
    phrasings (the category line reads the same in every split). v1's L4 hints half the
    tickets because at v0 the best trained test success fell 0.30, and our PPO's 0.59, from L3
    to the top (1.00 -> 0.70, 0.91 -> 0.32): a level whose success is the mean of hinted and
    unhinted tickets' cuts that fall about in half.

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (password-reset) | `AgentGym/CustomerSupport-L0-v1` | password reset tickets only; a `Category:` line in the ticket | 10 |
    | 1 (easy) | `AgentGym/CustomerSupport-L1-v1` | the easy kinds: password reset, billing inquiry; a `Category:` line in the ticket | 10 |
    | 2 (easy-medium) | `AgentGym/CustomerSupport-L2-v1` | easy and medium kinds: + API integration, refund request; a `Category:` line in the ticket | 10 |
    | 3 (all-hinted) | `AgentGym/CustomerSupport-L3-v1` | all five kinds (+ data migration); a `Category:` line in the ticket | 10 |
    | 4 (half-hinted) | `AgentGym/CustomerSupport-L4-v1` | all five kinds; a `Category:` line in half the tickets (a fixed half, by task id) | 10 |
    | v1 | `AgentGym/CustomerSupport-v1` | all five kinds, no category line | 10 |

    At v0 (`AgentGym/CustomerSupport-L<k>-v0`):

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (password-reset) | `AgentGym/CustomerSupport-L0-v0` | password reset tickets only; a `Category:` line in the ticket | 10 |
    | 1 (easy) | `AgentGym/CustomerSupport-L1-v0` | the easy kinds: password reset, billing inquiry; a `Category:` line in the ticket | 10 |
    | 2 (easy-medium) | `AgentGym/CustomerSupport-L2-v0` | easy and medium kinds: + API integration, refund request; a `Category:` line in the ticket | 10 |
    | 3 (all-hinted) | `AgentGym/CustomerSupport-L3-v0` | all five kinds (+ data migration); a `Category:` line in the ticket | 10 |
    | v0 | `AgentGym/CustomerSupport-v0` | all five kinds, no category line | 10 |

    ## Version History

    - v1: a validation split; the ticket text from a phrasing grammar split by fragment (30
      test and 12 validation phrasings a kind, against v0's 3 test ones), -v0's phrasings kept
      as units; validation value pools of its own; a level L4 with the category line on half
      the tickets; `info["unit_id"]` names the phrasing.
    - v0: initial version; text actions in every form language models write;
      `info["parse"]`; `sample_mask()`; outcome reasons as sentences; levels L0-L3 below
      `-v0` (`level=`, `kinds=`, `category_hint=`), `-v0` unchanged; the features observation
      holds a level's `Category:` line in a block of its own (`hint`, zeros at `-v0`).
    """

    def __init__(self, level: int | None = None, version: int = 1, **kwargs: Any) -> None:
        self.version = check_version("customer_support", version)
        kwargs = with_level("customer_support", level, kwargs, version=self.version)
        scenario = CustomerSupportScenario(kwargs.pop("kinds", None), kwargs.pop("category_hint", False), self.version)
        super().__init__(scenario, **kwargs)
        self.level = level

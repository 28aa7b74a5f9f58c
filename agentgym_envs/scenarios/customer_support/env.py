"""``AgentGym/CustomerSupport-v0``: the customer-support scenario run by the core :class:`ToolUseEnv`."""

from __future__ import annotations

from typing import Any

from agentgym_envs.core import ToolUseEnv
from agentgym_envs.levels import with_level

from .scenario import CustomerSupportScenario


class CustomerSupportEnv(ToolUseEnv):
    """A support agent resolves a customer's ticket by calling tools, one call per step.

    ## Description

    Tickets are generated from a seed: names, emails, plans, invoices, amounts and logs, with
    6 train and 3 test phrasings per kind and disjoint value pools for the test split. Kinds:
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

    ## Rewards

    Default `RewardConfig`: +10 for a correct tool choice and -20 for any other call; at the
    end +10 on success (or -5 on failure), plus on success up to +5 for token efficiency and
    up to +3 for speed (the fractions of the baseline's 500 tokens and 240 s saved). A call is
    a correct choice when it is one of the calls a resolution of this ticket needs and was not
    made before; closing the ticket counts only once it is resolved.
    `reward_config={"mode": "outcome"}` gives 0 per step and the outcome score (1 or 0) at
    the end.

    ## Starting State

    `reset(seed=s)` draws a ticket of `split`; `reset(options={"task_id": "test-42"})` picks
    one by id (`"<split>-<index>"`). The conversation is empty; the entity table holds the
    enum values and the customer's email.

    ## Episode End

    Terminated when `close_ticket` runs. Truncated after `max_turns` (10) calls, or after
    `max_invalid_calls` invalid calls when that is set.

    ## Arguments

    `action_mode` (`"structured"` | `"text"`), `split` (`"train"` | `"test"`), `task_file`
    (JSONL tickets; one line per ticket: `task_id`, `kind`, `text`, `customer` {`user_id`,
    `name`, `email`, `plan`}, optional `invoices` [{`invoice_id`, `amount`, `date`,
    `status` "paid" | "duplicate", `description`}], `logs`, and `issue` (`auth`,
    `rate_limit` or `server_error`) for API tickets; a malformed line fails with its line
    number and field), `reward_config` (a `RewardConfig` or a dict of its fields),
    `max_turns`, `max_invalid_calls`, `history_turns` (8), `render_mode` (`"ansi"`); `level`
    (see Levels), `kinds` (the ticket kinds generated, default all five) and `category_hint`
    (a `Category: <kind>` line opens the ticket, as help desks tag tickets; default off).

    ## Info and Metrics

    Every step: `task_id`, `turn`, `tool_call`, `valid`, `correct`, `error`, `tokens_used`,
    `messages` (OpenAI chat format); structured mode `action_mask` and `argument_mask`; text
    mode `parse` (the form the call was written in and the repairs it needed). At the end
    `outcome` (`success`, `score`, `reason`: a sentence saying what the resolution lacked or
    should not have done) and `metrics`: `success`, `score`, `tool_reliability`,
    `tokens_used`, `cost_reduction`, `time_savings`, `elapsed_s`, `turns`,
    `invalid_calls`, `correct_calls`. Success criteria (`agentgym list --detailed`): tool
    reliability >= 0.95, cost reduction >= 0.30, time savings >= 0.98.

    ## Levels

    `level=k` (or the id `AgentGym/CustomerSupport-L<k>-v0`) sets `kinds` and `category_hint`
    as below; arguments given explicitly override the level's. The tools, entity table and
    action space are those of `-v0` at every level; the test split keeps its unseen values
    and phrasings (the category line reads the same in both splits).

    | level | id | what it holds | max turns |
    | --- | --- | --- | --- |
    | 0 (password-reset) | `AgentGym/CustomerSupport-L0-v0` | password reset tickets only; a `Category:` line in the ticket | 10 |
    | 1 (easy) | `AgentGym/CustomerSupport-L1-v0` | the easy kinds: password reset, billing inquiry; a `Category:` line in the ticket | 10 |
    | 2 (easy-medium) | `AgentGym/CustomerSupport-L2-v0` | easy and medium kinds: + API integration, refund request; a `Category:` line in the ticket | 10 |
    | 3 (all-hinted) | `AgentGym/CustomerSupport-L3-v0` | all five kinds (+ data migration); a `Category:` line in the ticket | 10 |
    | v0 | `AgentGym/CustomerSupport-v0` | all five kinds, no category line | 10 |

    ## Version History

    - v0: initial version; text actions in every form language models write;
      `info["parse"]`; `sample_mask()`; outcome reasons as sentences; levels L0-L3 below
      `-v0` (`level=`, `kinds=`, `category_hint=`), `-v0` unchanged; the features observation
      holds a level's `Category:` line in a block of its own (`hint`, zeros at `-v0`).
    """

    def __init__(self, level: int | None = None, **kwargs: Any) -> None:
        kwargs = with_level("customer_support", level, kwargs)
        super().__init__(CustomerSupportScenario(kwargs.pop("kinds", None), kwargs.pop("category_hint", False)), **kwargs)
        self.level = level

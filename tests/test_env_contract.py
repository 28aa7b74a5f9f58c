"""The environment contract of DESIGN.md, checked on CustomerSupport-v0."""

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agentgym_envs.core import RewardConfig
from agentgym_envs.evaluation import ExpertPolicy, RandomPolicy, run_episode
from agentgym_envs.wrappers import BagOfTokensObservation, FlatDiscreteAction, TokenIdsObservation

CS = "AgentGym/CustomerSupport-v0"


@pytest.mark.parametrize("mode", ["structured", "text"])
def test_passes_gymnasium_check_env(mode):
    check_env(gym.make(CS, action_mode=mode).unwrapped, skip_render_check=False)


@pytest.mark.parametrize(
    "wrap", [BagOfTokensObservation, TokenIdsObservation, lambda e: FlatDiscreteAction(BagOfTokensObservation(e))]
)
def test_passes_sb3_check_env_through_wrappers(wrap):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(wrap(gym.make(CS)), warn=True)


def test_make_without_import_uses_module_prefix():
    env = gym.make("agentgym_envs:AgentGym/CustomerSupport-v0")
    assert isinstance(env.reset(seed=0)[0], str)


def test_reset_returns_ticket_text_and_entity_table(structured_env):
    obs, info = structured_env.reset(seed=0)
    assert obs.startswith("TICKET ") and "ENTITIES" in obs
    assert structured_env.observation_space.contains(obs)
    assert info["messages"][0]["role"] == "system" and info["messages"][1]["role"] == "user"


def test_sampled_action_steps(structured_env):
    structured_env.reset(seed=0)
    obs, reward, terminated, truncated, info = structured_env.step(structured_env.action_space.sample())
    assert isinstance(reward, float) and {"valid", "correct", "error", "tool_call"} <= info.keys()


def test_action_masks_are_maskable_ppo_form(structured_env):
    structured_env.reset(seed=0)
    masks = structured_env.unwrapped.action_masks()
    nvec = structured_env.action_space.nvec
    assert masks.dtype == bool and masks.shape == (nvec.sum(),)
    offsets = np.concatenate([[0], np.cumsum(nvec)])
    assert all(masks[a:b].any() for a, b in zip(offsets[:-1], offsets[1:]))
    _, _, _, _, info = structured_env.step(structured_env.action_space.sample(mask=_split(masks, nvec)))
    assert np.array_equal(info["action_mask"], structured_env.unwrapped.action_masks())


def _split(masks, nvec):
    offsets = np.cumsum(nvec)[:-1]
    return tuple(m.astype(np.int8) for m in np.split(masks, offsets))


def test_entity_slots_of_unfilled_rows_are_masked(structured_env):
    structured_env.reset(seed=0)
    n_rows = len(structured_env.unwrapped.episode.entities)
    masks = structured_env.unwrapped.action_masks()
    n_tools = structured_env.action_space.nvec[0]
    assert not masks[n_tools + n_rows : n_tools + structured_env.unwrapped.scenario.max_entities].any()


def test_lookup_reveals_user_id_entity(structured_env):
    structured_env.reset(seed=0)
    episode = structured_env.unwrapped.episode
    email_row = next(i for i, r in enumerate(episode.entities.rows) if r.kind == "email")
    obs, reward, *_ = structured_env.step(np.array([2, email_row, 0]))
    assert reward == 10.0
    assert any(row.kind == "user_id" for row in episode.entities.rows)
    assert "user_id: u" in obs


def test_wrong_entity_kind_is_an_error_result_with_penalty(structured_env):
    structured_env.reset(seed=0)
    # lookup_user expects an email; row 1 is a topic
    obs, reward, terminated, truncated, info = structured_env.step(np.array([2, 1, 0]))
    assert not info["valid"] and "needs an email" in info["error"] and reward == -20.0
    assert not terminated and not truncated


@pytest.mark.parametrize("action", [np.array([11, 0, 0]), np.array([0, 32, 0]), np.array([0, -1, 0]), np.array([[0, 0, 0]]), np.array([0, 0]),
                                    np.array([0.0, 1.0, 2.0]), [0, 0, 32], "text"])
def test_out_of_space_structured_action_raises_value_error_naming_space(structured_env, action):
    structured_env.reset(seed=0)
    with pytest.raises(ValueError, match=r"MultiDiscrete\(\[11 32 32\]\)"):
        structured_env.step(action)


@pytest.mark.parametrize(
    "action, problem",
    [
        ("not json", "no tool call found in 8 characters of text starting 'not json'"),
        ('{"name": "lookup_user" "arguments": {}}', "malformed JSON at line 1, column 24: Expecting ',' delimiter; hint"),
        ('{"name": "teleport", "arguments": {}}', "unknown tool 'teleport'"),
        ('{"name": "lookup_user", "arguments": {}}', "missing required argument 'email'"),
        ('{"name": "lookup_user", "arguments": {"email": "a@b.c", "x": 1}}', "no argument(s) ['x']"),
        ('{"name": "lookup_user", "arguments": {"email": 5}}', "must be of type string, got integer"),
        ('{"name": "escalate", "arguments": {"team": "marketing"}}', "must be one of"),
        ('{"name": "refund", "arguments": {"invoice_id": "INV-1", "amount": true}}', "got boolean"),
        (12345, "must be a JSON string"),
        (None, "must be a JSON string"),
    ],
)
def test_bad_text_action_is_error_observation_and_episode_goes_on(text_env, action, problem):
    text_env.reset(seed=0)
    obs, reward, terminated, truncated, info = text_env.step(action)
    assert problem in info["error"] and problem in obs
    assert reward == -20.0 and not info["valid"] and not terminated and not truncated
    text_env.step('{"name": "search_kb", "arguments": {"topic": "billing"}}')  # still running


def test_domain_error_is_valid_but_incorrect(text_env):
    text_env.reset(seed=0)
    _, reward, _, _, info = text_env.step('{"name": "lookup_user", "arguments": {"email": "nobody@nowhere.test"}}')
    assert info["valid"] and not info["correct"] and info["error"].startswith("Error: no user")
    assert reward == -20.0


def test_repeating_a_correct_call_is_incorrect(text_env):
    obs, info = text_env.reset(seed=0)
    email = text_env.unwrapped.episode.task.customer["email"]
    call = json.dumps({"name": "lookup_user", "arguments": {"email": email}})
    assert text_env.step(call)[1] == 10.0
    assert text_env.step(call)[1] == -20.0


def test_max_invalid_calls_truncates():
    env = gym.make(CS, action_mode="text", max_invalid_calls=3)
    env.reset(seed=0)
    results = [env.step("garbage") for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert results[-1][4]["metrics"]["invalid_calls"] == 3.0


def test_max_turns_truncates_with_metrics():
    env = gym.make(CS, max_turns=2)
    env.reset(seed=0)
    env.step(np.array([0, 1, 0]))
    *_, terminated, truncated, info = env.step(np.array([0, 1, 0]))
    assert truncated and not terminated and info["metrics"]["success"] == 0.0


def test_step_after_episode_end_asks_for_reset(structured_env):
    structured_env.reset(seed=0)
    structured_env.unwrapped.episode.ended = True
    with pytest.raises(RuntimeError, match="reset"):
        structured_env.unwrapped.step(np.array([0, 1, 0]))


def test_messages_are_openai_chat_format(text_env):
    text_env.reset(seed=0)
    email = text_env.unwrapped.episode.task.customer["email"]
    _, _, _, _, info = text_env.step(json.dumps({"name": "lookup_user", "arguments": {"email": email}}))
    assistant, tool = info["messages"][-2:]
    call = assistant["tool_calls"][0]
    assert assistant["role"] == "assistant" and call["type"] == "function"
    assert json.loads(call["function"]["arguments"]) == {"email": email}
    assert tool == {"role": "tool", "tool_call_id": call["id"], "content": tool["content"]}


def test_tool_schemas_are_openai_function_schemas(structured_env):
    schemas = structured_env.unwrapped.tool_schemas
    assert len(schemas) == 11
    refund = next(s["function"] for s in schemas if s["function"]["name"] == "refund")
    assert refund["parameters"]["required"] == ["invoice_id", "amount"]
    assert refund["parameters"]["properties"]["amount"]["type"] == "number"


def test_render_ansi_returns_the_observation():
    env = gym.make(CS, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert env.render() == obs


def test_reward_config_passes_through_make_as_dataclass_or_dict():
    for config in (RewardConfig(correct_call=1.0), {"correct_call": 1.0}):
        env = gym.make(CS, reward_config=config)
        env.reset(seed=0)
        agent = ExpertPolicy(env)
        assert env.step(agent(None, {}))[1] == 1.0


def test_unknown_reward_field_is_rejected():
    with pytest.raises(ValueError, match="unknown reward_config field"):
        gym.make(CS, reward_config={"bonus": 1})


@pytest.mark.parametrize("value", ["x", None, True, float("nan")])
def test_a_reward_field_that_is_no_finite_number_is_rejected_at_make(value):
    with pytest.raises(ValueError, match="reward_config field failure must be a finite number"):
        gym.make(CS, reward_config={"failure": value})


def test_outcome_mode_rewards_only_the_end():
    env = gym.make(CS, reward_config={"mode": "outcome"})
    env.reset(seed=3)
    agent, rewards, done = ExpertPolicy(env), [], False
    while not done:
        _, reward, terminated, truncated, _ = env.step(agent(None, {}))
        rewards.append(reward)
        done = terminated or truncated
    assert rewards[:-1] == [0.0] * (len(rewards) - 1) and rewards[-1] == 1.0


def test_episode_end_metrics_have_contract_keys(structured_env):
    _, metrics = run_episode(structured_env, ExpertPolicy(structured_env), seed=0)
    assert {"success", "tool_reliability", "tokens_used", "cost_reduction", "turns", "invalid_calls"} <= metrics.keys()
    assert metrics["success"] == 1.0 and metrics["tool_reliability"] == 1.0


def test_tool_reliability_is_correct_calls_over_all_calls_invalid_ones_included(text_env):
    text_env.reset(options={"task_id": "train-0"})  # a password reset
    lookup = json.dumps({"name": "lookup_user", "arguments": {"email": "liam.larsen59@corp.example"}})
    close = json.dumps({"name": "close_ticket", "arguments": {"resolution": "resolved"}})
    for action in ("{oops", lookup, lookup, close):  # invalid, right, a repeat, closing unresolved
        _, _, terminated, _, info = text_env.step(action)
    metrics = info["metrics"]
    assert terminated and (metrics["turns"], metrics["invalid_calls"], metrics["correct_calls"]) == (4, 1, 1)
    assert metrics["tool_reliability"] == 1 / 4 and metrics["success"] == 0.0
    # three calls ran (0.3 + 0.3 + 0.2 simulated seconds); a failed ticket adds the human's 240 s
    assert metrics["time_savings"] == pytest.approx(1 - (0.8 + 240) / 240)


def test_tokens_are_counted_with_cl100k(text_env):
    from agentgym_envs.core import count_tokens

    _, info = text_env.reset(seed=0)
    assert info["tokens_used"] == count_tokens(text_env.unwrapped.episode.prompt)
    assert count_tokens("hello world") == 2


def test_failed_ticket_costs_the_human_baseline_too(structured_env):
    _, metrics = run_episode(structured_env, RandomPolicy(structured_env, seed=0), seed=0)
    assert metrics["success"] == 0.0 and metrics["cost_reduction"] < 0 and metrics["time_savings"] <= 0


def test_history_is_trimmed_from_the_middle_keeping_the_task():
    env = gym.make(CS, action_mode="text", history_turns=2, max_turns=6)
    obs, _ = env.reset(seed=0)
    task = env.unwrapped.episode.prompt
    for n in range(5):
        obs, *_ = env.step(f'{{"name": "search_kb", "arguments": {{"topic": "turn{n}"}}}}')
    assert obs.startswith(task) and "(3 earlier turns omitted)" in obs
    assert "turn4" in obs and "turn0" not in obs


def test_history_turns_zero_shows_no_earlier_turn():
    env = gym.make(CS, action_mode="text", history_turns=0)
    env.reset(seed=0)
    obs, *_ = env.step('{"name": "search_kb", "arguments": {"topic": "turn0"}}')
    assert "turn0" not in obs and "(1 earlier turns omitted)" in obs


@pytest.mark.parametrize(("argument", "value"), [("max_turns", 0), ("max_turns", "10"), ("max_turns", 2.5),
                                                 ("max_invalid_calls", -1), ("history_turns", -1),
                                                 ("mask_repeats", "False")])
def test_a_bad_limit_or_switch_is_a_clear_error_naming_it(argument, value):
    with pytest.raises(ValueError, match=f"{argument} must be .*got {value!r}"):
        gym.make(CS, **{argument: value})


def test_observation_stays_in_space_for_unicode_garbage(text_env):
    text_env.reset(seed=0)
    obs, *_ = text_env.step("\u4e2d\u6587 \U0001f600 " * 2000)
    assert text_env.observation_space.contains(obs)


def test_argument_mask_allows_entities_of_the_argument_kind_and_row_zero_past_arity(structured_env):
    structured_env.reset(seed=0)
    episode = structured_env.unwrapped.episode
    argument = episode.argument_mask()
    kinds = [row.kind for row in episode.entities.rows]
    names = structured_env.unwrapped.tool_names
    lookup, send_email = names.index("lookup_user"), names.index("send_email")
    assert [kinds[i] for i in map(int, argument[lookup, 0].nonzero()[0])] == ["email"]
    assert list(argument[lookup, 1].nonzero()[0]) == [0]
    assert {kinds[i] for i in argument[send_email, 1].nonzero()[0]} == {"template"}


def test_closing_before_the_ticket_is_resolved_is_an_incorrect_call(text_env):
    text_env.reset(seed=0)
    resolution = text_env.unwrapped.episode.world.plan[-1].arguments["resolution"]
    _, reward, terminated, _, info = text_env.step(json.dumps({"name": "close_ticket", "arguments": {"resolution": resolution}}))
    assert terminated and not info["correct"] and info["metrics"]["success"] == 0.0
    assert reward == -20.0 + -5.0

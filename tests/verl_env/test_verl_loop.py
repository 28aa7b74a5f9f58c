"""The agentgym agent loop inside verl's own ``AgentLoopWorker`` (verl 0.9.1, CPU): the rows go
through verl's ``RLHFDataset`` and collate function, the worker (built from verl's composed
trainer config) instantiates the loop from ``verl_agent_loop.yaml`` and post-processes its
output into verl's batch; only the LLM server client is replaced (a scripted expert, or the
micro chat model generating on CPU).

These tests run in ``.venv-verl`` (verl pins its own transformers): tests/external_trainers/test_verl.py
runs them there with ``AGENTGYM_MICRO_MODEL`` set to the micro model's folder."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl", reason="verl runs in .venv-verl (tests/external_trainers/test_verl.py)")

from agentgym_envs import ENVIRONMENTS  # noqa: E402
from agentgym_envs.external_trainers.data import verl_rows, write_parquet  # noqa: E402
from agentgym_envs.external_trainers.episode import play_in_process  # noqa: E402

ENV_NAMES = [entry.name for entry in ENVIRONMENTS]
LOOP_YAML = Path(__file__).resolve().parents[2] / "agentgym_envs" / "external_trainers" / "verl_agent_loop.yaml"
RESPONSE_LENGTH = 32768  # a tau2 retail episode of the expert is over 8k tokens of the micro tokenizer
PROMPT_LENGTH = 12288  # a tau2 policy is about 7k tokens of the micro tokenizer


@pytest.fixture(scope="module")
def micro_model() -> str:
    path = os.environ.get("AGENTGYM_MICRO_MODEL")
    if not path or not Path(path, "config.json").exists():
        pytest.skip("AGENTGYM_MICRO_MODEL names no model folder (tests/external_trainers/test_verl.py builds and passes it)")
    return path


def verl_config(model: str, response_length: int = RESPONSE_LENGTH, **rollout: Any) -> Any:
    """verl's own trainer config (``ppo_trainer.yaml``, composed by Hydra) for the micro model."""
    import verl
    from hydra import compose, initialize_config_dir

    overrides = [f"actor_rollout_ref.model.path={model}", "actor_rollout_ref.rollout.name=vllm",
                 f"actor_rollout_ref.rollout.prompt_length={PROMPT_LENGTH}",
                 f"actor_rollout_ref.rollout.response_length={response_length}",
                 "actor_rollout_ref.rollout.calculate_log_probs=true",
                 f"actor_rollout_ref.rollout.agent.agent_loop_config_path={LOOP_YAML}",
                 f"data.max_prompt_length={PROMPT_LENGTH}", "data.return_raw_chat=true"]
    overrides += [f"actor_rollout_ref.rollout.{key}={value}" for key, value in rollout.items()]
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose(config_name="ppo_trainer", overrides=overrides)


def batch_of(rows: list[dict[str, Any]], config: Any, tokenizer: Any, tmp_path: Path) -> Any:
    """The rows as verl's trainer feeds them: parquet -> ``RLHFDataset`` -> ``collate_fn`` -> ``DataProto``."""
    from verl import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    path = write_parquet(rows, tmp_path / "rows.parquet")
    dataset = RLHFDataset(data_files=[str(path)], tokenizer=tokenizer, config=config.data)
    return DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))


class ScriptedServer:
    """An LLM server client that answers as the scripted expert: each trajectory (request id, which
    ends with the row's seed) gets the in-process expert episode's replies in order, each the
    reply's tokens and the end-of-turn token, with log-probs."""

    def __init__(self, tokenizer: Any, references: list[dict[str, Any]]) -> None:
        self.tokenizer, self.references = tokenizer, references
        self.pending: dict[str, list[str]] = {}
        self.generated: dict[str, list[list[int]]] = {}
        self.task: dict[str, dict[str, Any]] = {}

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **_: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        if request_id not in self.pending:
            reference = self.references[int(request_id.rsplit(":", 1)[1])]  # the loop's id ends with the seed
            assert reference["opening"][-1]["content"] in self.tokenizer.decode(prompt_ids)
            self.pending[request_id], self.task[request_id] = list(reference["actions"]), reference
        tokens = self.tokenizer.encode(self.pending[request_id].pop(0), add_special_tokens=False)
        tokens.append(self.tokenizer.eos_token_id)
        self.generated.setdefault(request_id, []).append(tokens)
        return TokenOutput(token_ids=tokens, log_probs=[-0.25] * len(tokens), stop_reason="completed")


class MicroModelServer:
    """An LLM server client that samples from the micro chat model on CPU."""

    def __init__(self, model: Any, tokenizer: Any, max_new_tokens: int = 40) -> None:
        self.model, self.tokenizer, self.max_new_tokens = model, tokenizer, max_new_tokens
        self.generated: dict[str, list[list[int]]] = {}

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **_: Any) -> Any:
        import torch
        from verl.workers.rollout.replica import TokenOutput

        torch.manual_seed(len(self.generated.get(request_id, [])))
        with torch.no_grad():
            out = self.model.generate(torch.tensor([prompt_ids]), do_sample=True, max_new_tokens=self.max_new_tokens,
                                      output_scores=True, return_dict_in_generate=True)
        tokens = out.sequences[0, len(prompt_ids):].tolist()
        scores = torch.stack(out.scores)[:, 0].log_softmax(-1)
        self.generated.setdefault(request_id, []).append(tokens)
        return TokenOutput(token_ids=tokens, log_probs=[float(scores[i, t]) for i, t in enumerate(tokens)],
                           stop_reason="completed")


def mask_spans(response: list[int], mask: list[int]) -> list[tuple[int, list[int]]]:
    """The response as runs of equal mask value: ``(mask, tokens)``."""
    spans: list[tuple[int, list[int]]] = []
    for token, bit in zip(response, mask, strict=True):
        if spans and spans[-1][0] == bit:
            spans[-1][1].append(token)
        else:
            spans.append((bit, [token]))
    return spans


def rendered_replies(tokenizer: Any, before: list[dict[str, Any]], replies: list[dict[str, Any]],
                     tools: list[dict[str, Any]]) -> str:
    """What the chat template adds for the env's replies after ``before`` (ending with the
    assistant's turn), with the next generation prompt."""
    prefix = tokenizer.apply_chat_template(before, tools=tools, tokenize=False)
    full = tokenizer.apply_chat_template(before + replies, tools=tools, tokenize=False, add_generation_prompt=True)
    assert full.startswith(prefix)
    return full[len(prefix):]


def unpadded(output: Any, index: int,
             response_length: int = RESPONSE_LENGTH) -> tuple[list[int], list[int], list[float]]:
    attention = output.batch["attention_mask"][index, -response_length:]
    length = int(attention.sum())
    return (output.batch["responses"][index, :length].tolist(), output.batch["response_mask"][index, :length].tolist(),
            output.batch["rollout_log_probs"][index, :length].tolist())


@pytest.mark.parametrize("name", ENV_NAMES)
def test_expert_through_verl_agent_loop_worker(name: str, micro_model: str, tmp_path: Path) -> None:
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    config = verl_config(micro_model)
    seeds = range(8)
    references = [play_in_process(name, seed) for seed in seeds]
    rows = verl_rows(name, len(seeds), seed=0)
    probe = AgentLoopWorker(config, llm_client=None)
    server = ScriptedServer(probe.tokenizer, references)
    worker = AgentLoopWorker(config, llm_client=server)
    tokenizer = worker.tokenizer
    batch = batch_of(rows, config, tokenizer, tmp_path)
    output = asyncio.run(worker.generate_sequences(batch))

    assert output.batch["responses"].shape == (len(seeds), RESPONSE_LENGTH)
    from agentgym_envs.external_trainers.episode import TextEpisode

    tools = TextEpisode(name).tool_schemas
    for index, reference in enumerate(references):
        played = output.non_tensor_batch["agentgym"][index]
        assert played["ended"] and played["task_id"] == reference["task_id"], played
        assert output.batch["rm_scores"][index].sum().item() == pytest.approx(reference["return"], abs=1e-5)
        assert output.non_tensor_batch["success"][index] == 1.0
        assert output.non_tensor_batch["return"][index] == pytest.approx(reference["return"])
        assert output.non_tensor_batch["tool_reliability"][index] == reference["metrics"]["tool_reliability"]
        assert list(output.non_tensor_batch["turn_scores"][index]) == pytest.approx(reference["rewards"])
        request = next(r for r, task in server.task.items() if task["task_id"] == reference["task_id"])
        response, mask, logprobs = unpadded(output, index)
        spans = mask_spans(response, mask)
        generated = [tokens for bit, tokens in spans if bit == 1]
        assert generated == server.generated[request], "mask 1 is exactly the sampled tokens, turn by turn"
        assert all(lp == -0.25 for lp, bit in zip(logprobs, mask, strict=True) if bit == 1)
        assert all(lp == 0.0 for lp, bit in zip(logprobs, mask, strict=True) if bit == 0)
        # each 0 span is the chat template's rendering of exactly the env's replies to the turn before and
        # the next generation prompt (verl's default Continuous Token builder, used for a llama model,
        # appends no newline after the end-of-turn token the model wrote); the last turn's are not appended
        context = [tokens for bit, tokens in spans if bit == 0]
        messages = list(reference["opening"])
        turns = turns_of(reference)
        assert len(context) == len(turns) - 1
        for span, (action, replies) in zip(context, turns, strict=False):
            before = messages + [{"role": "assistant", "content": action}]
            assert tokenizer.decode(span) == rendered_replies(tokenizer, before, replies, tools)
            messages = before + replies


@pytest.mark.parametrize(("limit", "response_length"), [("turns", RESPONSE_LENGTH), ("length", 48)])
def test_loop_stops_at_turn_limit_and_response_length(limit: str, response_length: int, micro_model: str,
                                                      tmp_path: Path) -> None:
    """An episode cut short (``max_assistant_turns``, or ``response_length`` reached) keeps the
    rewards of the turns played, says it did not finish, and never exceeds the response length."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    rollout = {"multi_turn.max_assistant_turns": 1} if limit == "turns" else {}
    config = verl_config(micro_model, response_length=response_length, **rollout)
    references = [play_in_process("customer_support", seed) for seed in range(2)]
    probe = AgentLoopWorker(config, llm_client=None)
    worker = AgentLoopWorker(config, llm_client=ScriptedServer(probe.tokenizer, references))
    output = asyncio.run(worker.generate_sequences(batch_of(verl_rows("customer_support", 2), config,
                                                            worker.tokenizer, tmp_path)))
    for index, reference in enumerate(references):
        played = output.non_tensor_batch["agentgym"][index]
        scores = list(output.non_tensor_batch["turn_scores"][index])
        assert not played["ended"] and output.non_tensor_batch["finished"][index] == 0.0
        assert output.non_tensor_batch["success"][index] == 0.0
        assert scores == pytest.approx(reference["rewards"][:len(scores)]) and len(scores) < len(reference["rewards"])
        if limit == "turns":
            assert len(scores) == 1
        assert output.batch["rm_scores"][index].sum().item() == pytest.approx(sum(scores), abs=1e-5)
        response, mask, _ = unpadded(output, index, response_length)
        assert len(response) <= response_length and mask[0] == 1


def turns_of(reference: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(the expert's reply, the env's replies to it) per turn of an in-process episode."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    actions = iter(reference["actions"])
    for message in reference["messages"][len(reference["opening"]):]:
        if message["role"] == "assistant":
            turns.append((next(actions), []))
        else:
            turns[-1][1].append(message)
    return turns


def test_micro_model_output_passes_verl_postprocessing(micro_model: str, tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM
    from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, AgentLoopWorker

    config = verl_config(micro_model, **{"multi_turn.max_assistant_turns": 2})
    probe = AgentLoopWorker(config, llm_client=None)
    model = AutoModelForCausalLM.from_pretrained(micro_model).eval()
    server = MicroModelServer(model, probe.tokenizer)
    worker = AgentLoopWorker(config, llm_client=server)
    rows = verl_rows("math", 1, seed=0) + verl_rows("customer_support", 1, seed=0)
    batch = batch_of(rows, config, worker.tokenizer, tmp_path)

    # one trajectory by hand: verl's AgentLoopOutput model, then the worker's per-sample postprocess
    from agentgym_envs.external_trainers.verl_loop import AgentGymAgentLoop

    kwargs = {k: v[0] for k, v in batch.non_tensor_batch.items()}
    sampling = {"temperature": 1.0, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
    async def one_trajectory() -> Any:
        loop = instantiate_loop(worker)  # inside the event loop, as verl's worker makes it
        assert isinstance(loop, AgentGymAgentLoop)
        return await loop.run(sampling, **kwargs)

    raw = asyncio.run(one_trajectory())
    AgentLoopOutput.model_validate(raw.model_dump())
    assert len(raw.response_ids) == len(raw.response_mask) == len(raw.response_logprobs)
    assert 1 <= raw.extra_fields["agentgym"]["turns"] <= 2
    assert raw.as_dict()["rm_scores"].sum().item() == pytest.approx(raw.reward_score)

    output = asyncio.run(worker.generate_sequences(batch))
    assert output.batch["responses"].shape == (2, RESPONSE_LENGTH)
    assert output.batch["input_ids"].shape == (2, PROMPT_LENGTH + RESPONSE_LENGTH)
    assert output.batch["position_ids"].shape == output.batch["attention_mask"].shape
    assert set(output.meta_info["reward_extra_keys"]) >= {"success", "tool_reliability", "return"}
    for index in range(2):
        response, mask, logprobs = unpadded(output, index)
        generated = [tokens for bit, tokens in mask_spans(response, mask) if bit == 1]
        request_turns = [turns for turns in server.generated.values() if turns[0] == generated[0]]
        assert request_turns and generated == request_turns[0][:len(generated)]
        assert (output.batch["response_mask"][index, len(response):] == 0).all()
        assert output.batch["rm_scores"][index].sum().item() == pytest.approx(
            output.non_tensor_batch["return"][index], abs=1e-5)


def instantiate_loop(worker: Any) -> Any:
    """The agent loop as ``AgentLoopWorker._run_agent_loop`` makes it (Hydra, from the YAML registry)."""
    import hydra
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry

    return hydra.utils.instantiate(config=_agent_loop_registry["agentgym"],
                                   trainer_config=DictConfigWrap(worker.config), server_manager=worker.llm_client,
                                   tokenizer=worker.tokenizer,
                                   processor=worker.processor, hf_model_type=worker.hf_model_type,
                                   dataset_cls=worker.dataset_cls, data_config=DictConfigWrap(worker.config.data),
                                   tools=ToolListWrap(worker.tools))


def test_documented_training_command_composes(micro_model: str) -> None:
    """Every override of docs/verl.md's training command is a key of verl's ``ppo_trainer`` config."""
    import re

    import verl
    from hydra import compose, initialize_config_dir

    text = (Path(__file__).resolve().parents[2] / "docs" / "verl.md").read_text(encoding="utf-8")
    command = next(block for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL) if "main_ppo" in block)
    overrides = [line.strip().rstrip("\\").strip() for line in command.splitlines()[1:] if "=" in line]
    overrides = [o.replace("'", "") for o in overrides if not o.startswith("actor_rollout_ref.model.path=")]
    assert any(o.startswith("actor_rollout_ref.rollout.agent.agent_loop_config_path=") for o in overrides)
    overrides.append(f"actor_rollout_ref.model.path={micro_model}")
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=overrides)
    assert config.actor_rollout_ref.rollout.agent.agent_loop_config_path.endswith("verl_agent_loop.yaml")
    assert config.algorithm.adv_estimator == "grpo"

"""What the LLM trainers share: loading a Hugging Face model for training (optionally with
LoRA), the checkpoint of a run (weights, optimizer, RNG, progress) for an exact resume, and
saving the trained model so that any Hugging Face code path loads it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from .. import checkpoints
from ..run import CheckpointError, summary_writer
from .model import load

STATE_FILE = "llm_state.ckpt"  # not ".pt": the lifecycle reads .pt files as token-policy checkpoints
MODEL_DIR = "model"


def load_for_training(model: str, device: torch.device, lora_rank: int = 0, lora_alpha: int = 16) -> tuple[Any, Any]:
    """``(model, tokenizer)`` in float32 on ``device`` (bf16 comes from :func:`autocast`);
    ``lora_rank`` > 0 wraps the model in peft LoRA adapters on every linear layer, so that only
    the adapters train."""
    network, tokenizer = load(model, device)
    if lora_rank > 0:
        from peft import LoraConfig, get_peft_model

        network = get_peft_model(network, LoraConfig(r=lora_rank, lora_alpha=lora_alpha, target_modules="all-linear",
                                                     lora_dropout=0.0, task_type="CAUSAL_LM"))
    return network, tokenizer


def autocast(device: torch.device, cpu_bf16: bool = False) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA, and with ``cpu_bf16`` on a CPU that computes in bf16 natively
    (AVX-512 BF16; elsewhere bf16 would be emulated, slower than full precision); otherwise full
    precision."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    if cpu_bf16 and cpu_computes_bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def cpu_computes_bf16() -> bool:
    """Whether this CPU has bf16 arithmetic (AVX-512 BF16)."""
    check = getattr(torch.cpu, "_is_avx512_bf16_supported", None)
    return bool(check and check())


def window(network: Any, tokenizer: Any) -> int:
    """The model's context window in tokens."""
    config = network.config
    return int(getattr(config, "max_position_embeddings", 0) or tokenizer.model_max_length)


def save_state(run_dir: Path, network: Any, optimizer: torch.optim.Optimizer, progress: dict[str, Any],
               config: dict[str, Any]) -> None:
    """Checkpoint a run atomically: trainable weights, optimizer, RNG states, ``progress``
    (counters the loop resumes from) and the config."""
    payload = {
        "config": config,
        "weights": {k: v for k, v in network.state_dict().items()},
        "optimizer": optimizer.state_dict(),
        "rng": checkpoints.rng_state(),
        "progress": progress,
    }
    checkpoints.save(run_dir / STATE_FILE, payload)


def load_state(run_dir: Path) -> dict[str, Any] | None:
    """The checkpoint of ``run_dir``, or None when it has none."""
    path = run_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): {exc}") from exc


def restore(state: dict[str, Any], network: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Put a checkpoint's weights, optimizer and RNG states back; return its progress."""
    network.load_state_dict(state["weights"])
    optimizer.load_state_dict(state["optimizer"])
    checkpoints.set_rng_state(state["rng"])
    return state["progress"]


def save_model(network: Any, tokenizer: Any, path: Path) -> Path:
    """Save a plain Hugging Face model (LoRA adapters merged into a copy) with its tokenizer."""
    if hasattr(network, "merge_and_unload"):
        import copy

        network = copy.deepcopy(network).merge_and_unload()
    network.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path



def prepare_run_dir(run_dir: str | Path, resume: bool) -> Path:
    """The run's directory when a trainer runs on its own (not through the lifecycle): a fresh
    run starts from an empty one."""
    import shutil

    path = Path(run_dir)
    if path.exists() and not resume:
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def writer_for(run_dir: Path, resumed_step: int | None) -> Any:
    """A TensorBoard writer; a resumed run drops events logged after its checkpoint."""
    return summary_writer(run_dir, resumed_step + 1 if resumed_step is not None else None)


class LLMPolicy:
    """A trained model as the lifecycle and ``agentgym eval`` use it: the env in text mode and
    a greedy :class:`~agentgym_envs.evaluation.hf_agent.TransformersAgent` on the saved model."""

    def __init__(self, env_id: str, model_dir: str | Path, env_kwargs: dict[str, Any] | None = None,
                 device: str = "auto") -> None:
        self.env_id, self.model_dir, self.device = env_id, str(model_dir), device
        self.env_kwargs = {**(env_kwargs or {}), "action_mode": "text"}

    def make_env(self, split: str) -> Any:
        from ..run import make_env

        return make_env(self.env_id, split, self.env_kwargs)

    def agent(self, env: Any) -> Any:
        from agentgym_envs.evaluation.hf_agent import TransformersAgent

        return TransformersAgent(self.model_dir, device=self.device)


def load_policy(checkpoint: str | Path, device: str = "auto") -> LLMPolicy:
    """The trained model of the run whose checkpoint this is (its ``model/`` beside it), on the
    env and env arguments its ``run.json`` records."""
    from ..run import run_info

    if not Path(checkpoint).is_file():
        raise CheckpointError(f"no LLM checkpoint at {checkpoint}")
    info = run_info(checkpoint)
    return LLMPolicy(info["env_id"], Path(checkpoint).parent / MODEL_DIR, info.get("env_kwargs"), device)

"""What the LLM trainers share: loading a Hugging Face model for training (optionally with
LoRA), the checkpoint of a run (weights, optimizer, RNG, progress) for an exact resume, and
saving the trained model so that any Hugging Face code path loads it."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from .. import common
from .model import load

STATE_FILE = "llm_state.pt"
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


def autocast(device: torch.device) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA; full precision on CPU."""
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


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
        "rng": common.rng_state(),
        "progress": progress,
    }
    common.save_checkpoint(run_dir / STATE_FILE, payload)


def load_state(run_dir: Path) -> dict[str, Any] | None:
    """The checkpoint of ``run_dir``, or None when it has none."""
    path = run_dir / STATE_FILE
    if not path.exists():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise common.CheckpointError(f"{path} is not a readable checkpoint (corrupt or truncated?): {exc}") from exc


def restore(state: dict[str, Any], network: Any, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Put a checkpoint's weights, optimizer and RNG states back; return its progress."""
    network.load_state_dict(state["weights"])
    optimizer.load_state_dict(state["optimizer"])
    common.set_rng_state(state["rng"])
    return state["progress"]


def save_model(network: Any, tokenizer: Any, path: Path) -> Path:
    """Save a plain Hugging Face model (LoRA adapters merged into a copy) with its tokenizer."""
    if hasattr(network, "merge_and_unload"):
        import copy

        network = copy.deepcopy(network).merge_and_unload()
    network.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def finish(algo: str, env_id: str, seed: int, env_steps: int, wall_time_s: float, train_metrics: dict[str, float],
           test_metrics: dict[str, float], run_dir: str | Path) -> Any:
    """The run's :class:`~trainers.registry.TrainResult`, printed as every trainer's final
    table and written to ``<run_dir>/result.json``."""
    from ..protocol import save_result
    from ..registry import TrainResult

    print(common.final_report(env_id, algo, train_metrics, test_metrics))
    result = TrainResult(algo=algo, env_id=env_id, seed=seed, total_steps=env_steps, wall_time_s=wall_time_s,
                         sps=env_steps / wall_time_s if wall_time_s > 0 else float("nan"), train_metrics=train_metrics,
                         test_metrics=test_metrics, curve=[], steps_to_target=None, run_dir=str(run_dir))
    save_result(result)
    return result


def require_model(overrides: dict[str, Any], algo: str) -> None:
    """A clear error when a run names no model."""
    if not overrides.get("model"):
        raise ValueError(f"{algo} trains a Hugging Face causal LM: pass --set model=PATH_OR_HUB_ID "
                         "(e.g. a model built by `agentgym llm-build-model`)")

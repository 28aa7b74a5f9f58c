"""Writes the config tables of docs/algorithms/*.md from the trainers' config dataclasses: every
field, its type, its default and its meaning (the comment or docstring beside the field in the
source, else a shared description below). Each table sits between the markers
``<!-- config: module.Class -->`` and ``<!-- /config -->``; ``own`` after the class path lists
only the fields the class declares itself (not those of its bases).

    python docs/algorithms/config_tables.py          # rewrite the tables
    python docs/algorithms/config_tables.py --check  # exit 1 when a page is stale (the tests run this)
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from anywhere

MARKER = re.compile(r"(<!-- config: ([\w.]+)( own)? -->\n)(.*?)(<!-- /config -->)", re.DOTALL)

# Fields whose source carries no comment: their meaning, shared by the trainers that have them.
SHARED = {
    "learning_rate": "the optimizer's learning rate",
    "anneal_lr": "anneal the learning rate linearly to 0 over the run",
    "gamma": "discount factor",
    "gae_lambda": "GAE's lambda (bias against variance of the advantage estimate)",
    "num_minibatches": "minibatches per update epoch",
    "update_epochs": "passes over each rollout batch",
    "norm_adv": "normalise advantages within each minibatch",
    "clip_coef": "the policy ratio's clip range (PPO's epsilon)",
    "clip_vloss": "clip the value loss as PPO's reference implementation does",
    "ent_coef": "weight of the entropy bonus",
    "vf_coef": "weight of the value loss",
    "max_grad_norm": "gradients are clipped to this global norm",
    "target_kl": "stop an update's epochs early when the approximate KL exceeds this (None: never)",
    "eval_curve_episodes": "greedy test episodes per learning-curve point",
    "checkpoint_every": "write a checkpoint every this many updates (steps for the LLM trainers)",
    "epochs": "passes over the data",
    "batch_size": "examples per optimizer step",
    "embed_dim": "the token policy's width",
    "layers": "transformer encoder layers",
    "heads": "attention heads",
    "ff_dim": "width of the encoder's feed-forward layers",
    "entity_len": "tokens kept of each entity row",
    "model": "the model: a local directory or a hub id (an endpoint's model name for APO)",
    "seed": "random seed",
    "device": "`cpu`, `cuda` or `auto`",
    "run_dir": "where the run's logs, checkpoints and results go",
    "threads": "CPU threads for torch (0: torch's default)",
    "env_id": "the environment id",
    "total_steps": "env steps of the run",
    "n_steps": "steps per env per rollout",
    "n_epochs": "passes over each rollout batch",
    "clip_range": "the policy ratio's clip range",
    "n_envs": "parallel envs",
    "buffer_size": "replay buffer size (transitions)",
    "learning_starts": "env steps before the first update",
    "train_freq": "env steps between updates",
    "gradient_steps": "gradient steps per update",
    "target_update_interval": "env steps between target-network copies",
    "exploration_fraction": "share of the run over which epsilon falls",
    "exploration_final_eps": "epsilon after the fall",
    "weight_decay": "AdamW's weight decay",
    "warmup_steps": "optimizer steps of linear learning-rate warm-up",
    "max_new_tokens": "the reply limit in tokens",
    "temperature": "sampling temperature",
    "env_kwargs": "keyword arguments for `gym.make`",
    "observation": ("what the network reads: `tokens` (token ids), `bag` (hashed token counts) or `features` "
                    "(the env's features vector; flat admissible actions)"),
    "context_len": "tokens kept of the conversation (the `tokens` observation)",
    "num_envs": "parallel envs in the vector env",
    "eval_every_steps": "env steps between learning-curve evaluations (0: only at the end)",
    "eval_every": "env steps between learning-curve evaluations on validation and train (the run's curve_every when set)",
    "curve_eval_episodes": "episodes per split at each of those evaluations",
    "eval_episodes": "episodes per split of the final evaluation",
    "log_every": "env steps between TensorBoard logs",
    "torch_threads": "CPU threads for torch",
    "reward_scale": "the training rewards are multiplied by this for learning (logged returns are unscaled)",
    "mask_repeats": "the env masks a call already made",
    "action_layout": "`FlatDiscreteAction`'s layout: `admissible` numbers each tool's valid calls",
    "action_capacity": "`FlatDiscreteAction`'s calls numbered per tool (None: the scenario's `flat_capacity`, 64; Math 256)",
    "bag_dim": "size of the `bag` observation's hashed counts",
    "hash_buckets": "embeddings the `tokens` extractor hashes token ids into",
    "recent_tokens": "latest context tokens the `tokens` extractor pools apart (the latest tool result)",
    "features_dim": "output width of the `tokens` extractor",
    "tasks_per_update": "tasks per update, each played `group_size` times",
    "api_key": "the endpoint's API key (None: `OPENAI_API_KEY`)",
    "optimizer_api_key": "the optimiser endpoint's API key",
    "optimizer_temperature": "the optimiser model's sampling temperature",
    "optimizer_max_tokens": "the optimiser model's reply limit",
    "rounds": "rounds of search",
    "beam_width": "prompts kept after each round",
    "output_dir": "where TRL writes the run",
    "logging_steps": "optimizer steps between logs",
    "save_steps": "optimizer steps between checkpoints",
}


def resolve(path: str) -> type:
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


def comments(cls: type) -> dict[str, str]:
    """Each field's comment in ``cls``'s own source: the trailing comment of its line, else the
    comment lines just above it, else the string literal just below it."""
    source = textwrap.dedent(inspect.getsource(cls))
    lines = source.splitlines()
    body = ast.parse(source).body[0].body
    found = {}
    for index, node in enumerate(body):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        line = lines[node.lineno - 1]
        trailing = re.search(r"#\s*(.*)$", line[node.end_col_offset:]) if node.end_lineno == node.lineno else None
        above = []
        for previous in reversed(lines[: node.lineno - 1]):
            if not previous.strip().startswith("#"):
                break
            above.insert(0, previous.strip().lstrip("#").strip())
        after = body[index + 1] if index + 1 < len(body) else None
        docstring = after.value.value if (isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                                          and isinstance(after.value.value, str)) else ""
        text = trailing.group(1) if trailing else " ".join(above) or " ".join(docstring.split())
        found[node.target.id] = text
    return found


def annotations(cls: type) -> dict[str, str]:
    source = textwrap.dedent(inspect.getsource(cls))
    return {node.target.id: ast.unparse(node.annotation) for node in ast.parse(source).body[0].body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


def default(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        value = field.default
    elif field.default_factory is not dataclasses.MISSING:
        value = field.default_factory()
    else:
        return "required"
    return f"`{value!r}`".replace("|", "\\|")


def table(path: str, own: bool) -> str:
    cls = resolve(path)
    meaning, kinds = {}, {}
    for base in reversed(cls.__mro__):
        if dataclasses.is_dataclass(base) and base is not object:
            meaning.update(comments(base))
            kinds.update(annotations(base))
    fields = [f for f in dataclasses.fields(cls) if not own or f.name in cls.__dict__.get("__annotations__", {})]
    rows = ["| field | type | default | meaning |", "| --- | --- | --- | --- |"]
    for field in fields:
        text = meaning.get(field.name) or SHARED.get(field.name, "")
        kind = kinds.get(field.name, str(field.type)).replace("|", "\\|")
        rows.append(f"| `{field.name}` | `{kind}` | {default(field)} | {text.replace('|', '/')} |")
    return "\n".join(rows) + "\n"


def render(page: str) -> str:
    return MARKER.sub(lambda m: m.group(1) + table(m.group(2), bool(m.group(3))) + m.group(5), page)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a page's tables are stale")
    args = parser.parse_args(argv)
    stale = []
    for page in sorted(HERE.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            stale.append(page.name)
            if not args.check:
                page.write_text(new, encoding="utf-8")
    if args.check and stale:
        print("stale config tables (run python docs/algorithms/config_tables.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Language models as rows of the suite: evaluated, not trained.

A model is given as ``[NAME=]hf:PATH`` (a local Hugging Face model directory, played in this
process) or ``[NAME=]openai:MODEL@BASE_URL`` (any OpenAI-compatible endpoint; the key, if it needs
one, from ``OPENAI_API_KEY``); NAME is its ``algorithm`` column (default: ``llm-`` and the path's
last part, or the model name), which neither another model nor one of the preset's algorithms may
share. Each row plays the level's test split in text mode, greedily
(temperature 0), on the episodes the trained rows' final evaluation plays (seeded ``EVAL_SEED``,
``EVAL_SEED + 1``, ...: the same tasks and units), through the ``agentgym eval`` command that the
row records, so the command reproduces it. Such a row has no budget, no env steps, no training
seconds, no train success and no learning curve; its ``model`` column names what was evaluated
(the directory and a hash of its files, or the model name and endpoint). Its settings hash covers
its ``agentgym eval`` arguments (env id, episodes and their seed, task source, decoding, a local
model's device) and that identity: new weights in the same directory run the row again. An
``--llm-ids`` id of another version than the ladder's level is named with its version (``L0-v0``). An interrupted evaluation continues its episodes file; its
seconds are summed over sittings. An episode that an error of the model or its endpoint ended is
no outcome: the row is not written, and the next sitting replays that episode. Imports neither
torch nor SB3 (the report reads it too)."""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentgym_envs.levels import level_ids

from .plan import Preset, level_name
from .store import KEY, latest_episodes

if TYPE_CHECKING:
    from .runner import Job

FORMS = "[NAME=]hf:PATH or [NAME=]openai:MODEL@BASE_URL"
# the task source of each tau2 family's trained rows (a language model plays every real task in order unless told)
TASK_SOURCES = {"tau2_retail": ["--source", "generated"], "tau2_airline": ["--source", "generated"],
                "tau2_telecom": ["--source", "real", "--seeded"]}


def is_llm_row(row: dict[str, str]) -> bool:
    """Whether a suite row is a language model's (evaluated only: no training, no curve)."""
    return bool(row.get("model"))


def weights_hash(path: Path) -> str:
    """sha256 of the files directly in a model directory (weights, config, tokenizer: names and
    bytes, in name order), 16 hex digits."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.iterdir() if p.is_file())
    if not files:
        raise ValueError(f"{path}: no model files there")
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class LLMPolicy:
    """A language model to evaluate: its row name, ``hf`` or ``openai``, the model (a local
    directory or the endpoint's model name), the endpoint."""

    label: str
    kind: str
    model: str
    base_url: str | None = None

    @classmethod
    def parse(cls, text: str) -> LLMPolicy:
        """From ``[NAME=]hf:PATH`` or ``[NAME=]openai:MODEL@BASE_URL``; a clear error otherwise."""
        label, _, spec = text.partition("=") if "=" in text.split(":", 1)[0] else ("", "", text)
        kind, _, rest = spec.partition(":")
        if kind == "hf" and rest:
            if not Path(rest).is_dir():
                raise ValueError(f"--llm {text}: {rest} is not a model directory")
            return cls(label or f"llm-{Path(rest).resolve().name}", kind, rest)
        model, _, base_url = rest.rpartition("@")
        if kind == "openai" and model and base_url:
            return cls(label or f"llm-{model.rstrip('/').split('/')[-1]}", kind, model, base_url)
        raise ValueError(f"--llm {text}: expected {FORMS}")

    def identity(self) -> str:
        """What the row evaluated: ``PATH sha256:<hash of its files>``, or ``MODEL @ BASE_URL``."""
        if self.kind == "hf":
            return f"{self.model} sha256:{weights_hash(Path(self.model))}"
        return f"{self.model} @ {self.base_url}"


@dataclass(frozen=True)
class LLMCell:
    """One language model's evaluation on one level's test split (a row with seed 0, as the
    references have)."""

    env: str
    level: str
    env_id: str
    algorithm: str
    policy: LLMPolicy
    identity: str
    eval_episodes: int
    max_tokens: int
    concurrency: int
    seed: int = 0
    env_steps: int = 0

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.env, self.level, self.algorithm, self.seed

    @property
    def name(self) -> str:
        return f"[{self.env} {self.level} {self.algorithm}, evaluated only]"

    def settings_hash(self, device: str) -> str:
        """A hash of everything the row depends on: its ``agentgym eval`` arguments (env id, split,
        episodes and their seed, task source, decoding, the device of a local model) and the model's identity."""
        record = {"eval": self.words(device, "EPISODES_FILE"), "model": self.identity}
        return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]

    def words(self, device: str, output: str) -> list[str]:
        """The ``agentgym eval`` arguments of this row, its episodes written to ``output``."""
        from trainers.run import EVAL_SEED

        words = ["eval", self.env_id, "--policy", self.policy.kind, "--model", self.policy.model]
        words += ["--base-url", self.policy.base_url] if self.policy.base_url else ["--device", device]
        words += ["--split", "test", "--episodes", str(self.eval_episodes), "--seed", str(EVAL_SEED), "--temperature", "0",
                  "--max-tokens", str(self.max_tokens), "--concurrency", str(self.concurrency), "--no-store"]
        return [*words, *TASK_SOURCES.get(self.env, []), "--output", output]

    def command(self, device: str, run_root: str = "runs/reproduce") -> str:
        """The command line that reproduces the row from the repository root."""
        return shlex.join(["agentgym", *self.words(device, f"{run_root}/{self.file_stem()}.jsonl")])

    def file_stem(self) -> str:
        return f"{self.env_id.split('/')[-1]}__{self.algorithm}"

    def evaluate(self, job: Job) -> dict[str, Any]:
        """Play the row's episodes (continuing its episodes file when it was started with these
        settings); its row, no curve points, its test episodes."""
        from agentgym_envs.cli import main as agentgym
        from trainers.lifecycle import add_sitting

        from .runner import episode_rows, machine, versions

        settings_hash = self.settings_hash(job.device)
        folder = Path(job.run_root) / "llm" / self.file_stem()
        marker, output = folder / "settings", folder / "episodes_test.jsonl"
        resume = marker.exists() and marker.read_text(encoding="utf-8") == settings_hash and output.exists()
        if not resume:
            folder.mkdir(parents=True, exist_ok=True)
            output.unlink(missing_ok=True)
            (folder / "wall.json").unlink(missing_ok=True)
            marker.write_text(settings_hash, encoding="utf-8")
        started = time.perf_counter()
        status = agentgym([*self.words(job.device, str(output)), *(["--resume"] if resume else [])])
        if status != 0:
            raise RuntimeError(f"agentgym {shlex.join(self.words(job.device, str(output)))} exited with {status}")
        walls = add_sitting(folder, 0.0, time.perf_counter() - started)
        failed = failed_episodes(output)
        if failed:
            raise RuntimeError(f"{failed} episode(s) ended with an error of the model or its endpoint (in {output}); "
                               "a row counts none: run the suite again to replay them")
        episodes = episode_rows(self, output, "test")
        successes = [float(e["success"]) for e in episodes]
        row = {**dict(zip(KEY, self.key)), "env_id": self.env_id, "budget": 0, "env_steps": 0, "train_success": "",
               "test_success": round(sum(successes) / len(successes), 4),
               "test_return": round(sum(float(e["return"]) for e in episodes) / len(episodes), 4),
               "wall_train_s": 0.0, "wall_eval_s": round(walls["eval_s"], 3), "sittings": walls["sittings"],
               "settings_hash": settings_hash, "commit": job.commit, "command": self.command(job.device), **versions(),
               "cpu": machine(), "model": self.identity}
        return {"row": row, "curves": [], "episodes": episodes}


def failed_episodes(path: Path) -> int:
    """The episodes of an evaluation's results file whose latest play ended with an error."""
    return sum(record["error"] is not None for record in latest_episodes(path))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The suite's options for language-model rows."""
    group = parser.add_argument_group("language models (evaluated only, in text mode, on each level's test split)")
    group.add_argument("--llm", nargs="+", default=[], metavar="SPEC", help=f"a row per model and level: {FORMS}")
    group.add_argument("--llm-ids", nargs="+", default=[], metavar="ENV_ID",
                       help="these env ids too, e.g. the -v0 a model learnt (AgentGym/Math-v0; another version "
                       "of a ladder level is named with its version: L0-v0)")
    group.add_argument("--llm-episodes", type=int, help="test episodes per level (default: the preset's, the trained "
                       "rows' count; fewer play the first of the same episodes)")
    group.add_argument("--llm-max-tokens", type=int, default=256, help="tokens a model may write per turn")
    group.add_argument("--llm-concurrency", type=int, default=8, help="episodes played at once (the hf batch, or "
                       "requests in flight)")


def llm_cells(args: argparse.Namespace, preset: Preset, families: Sequence[str]) -> list[LLMCell]:
    """The language-model rows ``args`` ask for: each model on every level of ``families`` (the
    preset's ladder, each family's text mode: the support team's through its single-agent adapter, the model
    playing every agent in turn, as the trained rows' one network does), then on ``--llm-ids``."""
    policies = [LLMPolicy.parse(text) for text in args.llm]
    if not policies:
        return []
    if args.llm_ids and not all(isinstance(i, str) and i.startswith("AgentGym/") for i in args.llm_ids):
        raise ValueError(f"--llm-ids takes full env ids (AgentGym/...), got {args.llm_ids}")
    episodes = args.llm_episodes or preset.eval_episodes
    if episodes < 1 or args.llm_max_tokens < 1 or args.llm_concurrency < 1:
        raise ValueError("--llm-episodes, --llm-max-tokens and --llm-concurrency must be at least 1")
    ids = [(f, i) for f in families for i in (level_ids(f) if preset.levels == "all" else level_ids(f)[:1])]
    ids += [(family_of(i, families), i) for i in args.llm_ids]
    check_labels(policies, preset)
    cells = []
    for policy in policies:
        identity = policy.identity()
        cells += [LLMCell(family, row_level(family, env_id), env_id, policy.label, policy, identity, episodes,
                          args.llm_max_tokens, args.llm_concurrency) for family, env_id in ids]
    repeated = sorted({cell.name for cell in cells if sum(c.key == cell.key for c in cells) > 1})
    if repeated:
        raise ValueError(f"language-model rows asked for twice: {', '.join(repeated)} (an --llm-ids id repeated "
                         "or already on the preset's ladder)")
    return cells


def check_labels(policies: Sequence[LLMPolicy], preset: Preset) -> None:
    """Refuse a model name that two ``--llm`` specs share or that is one of ``preset``'s algorithms
    (their rows would take one another's place)."""
    labels = [policy.label for policy in policies]
    shared = sorted({label for label in labels if labels.count(label) > 1})
    if shared:
        raise ValueError(f"--llm: two models named {', '.join(shared)}: give each its own NAME= ({FORMS})")
    taken = sorted(set(labels) & set(preset.all_algorithms()))
    if taken:
        raise ValueError(f"--llm: {', '.join(taken)} is an algorithm of the preset: give the model another NAME=")


def row_level(family: str, env_id: str) -> str:
    """The level column of a model's row on ``env_id``: the ladder's name (``L0``, ``v1``), with the
    version where ``env_id`` is another version of a ladder level (``AgentGym/CustomerSupport-L0-v0``
    -> ``L0-v0``, beside the ladder's ``-L0-v1`` row ``L0``)."""
    ladder = level_ids(family)
    level = level_name(env_id)
    if env_id not in ladder and level in {level_name(i) for i in ladder}:
        return f"{level}-v{env_id.rpartition('-v')[2]}"
    return level


def family_of(env_id: str, families: Sequence[str]) -> str:
    """The suite family whose ladder holds ``env_id`` at some version."""
    from agentgym_envs.levels import family

    name = family(env_id).name
    if name not in families:
        raise ValueError(f"{env_id} is of family {name}, not one of {list(families)}")
    return name

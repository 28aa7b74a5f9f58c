"""One command that makes the project's chat model: expert trajectories, tokenizer, network,
and the ``llm-sft`` warm start on those trajectories.

    agentgym llm-build-model --out models/agentgym-tiny            # the demo model (minutes on CPU)
    python -m trainers.llm.recipe.build --out /tmp/micro --size micro     # the test model (seconds)

``<out>`` then holds the warm-started model and tokenizer (``save_pretrained``: any Hugging
Face code path loads it), ``base/`` the untrained one, ``sft/`` the SFT run (TensorBoard,
checkpoint) and ``expert_train.jsonl`` the trajectories it learnt from; with a corrections
round (``--corrections``), ``corrections.jsonl`` the expert's calls after
the SFT'd model's own slips (:mod:`trainers.llm.recipe.corrections`) and ``sft_corrections/`` the SFT
run on them. ``--resume`` continues an interrupted build: a stage whose output is there is not run
again, and an SFT stage goes on from its last checkpoint; ``build.json`` records the build's definition,
and a resume with another is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from .corpus import copy_drills
from .model import DEFAULT_ENVS, SIZES, build_base

# Per size: augmented expert episodes per env (``trainers.llm.recipe.corpus``: every conversation a
# fresh task, so the model must copy values rather than recall them), the copy drills SFT
# learns first (a curriculum: the network learns to copy from the context on dense, short
# drills, then the tool calls), and the SFT hyper-parameters that differ from
# ``sft.Config``'s (``drill_sft``: those of the drill stage); ``replay``: fresh drills mixed into
# the episodes, so that copying is kept while the tool calls are learnt; ``corrections``: a last
# round of DAgger (``tasks`` fresh tasks per env played by the SFT'd model, the expert's next
# call labelled from each slip on, then SFT at ``learning_rate`` on those mixed with ``replay``
# of the expert episodes; benchmarks/results/llm_model.md; ``--corrections TASKS`` turns it
# on). micro is sized to seconds (it only has to exist, load and run); tiny to 20 minutes of
# the 2-core CPU at light load (a job on the other core can make a step 3-6x slower); small to
# one GPU (what its stages took on an H100: the history of benchmarks/results/llm_grpo.md in git). Drills at lr 1e-3:
# at 3e-3 the tiny network did not learn to copy; tiny's episodes at 8 a step and lr 2e-3: one
# epoch of 16 a step at 1e-3 left them under-fitted, and twice the updates at 8 a step cost a
# sixth more time, where a second epoch or the corrections round cost 18-24 minutes more
# (benchmarks/results/llm_model.md).
RECIPES = {"micro": {"episodes": 8, "drills": 4, "epochs": 1, "batch_size": 8},
           "tiny": {"episodes": 9600, "drills": 32000, "replay": 3200,
                    "drill_sft": {"batch_size": 32, "micro_batch": 32, "learning_rate": 1e-3},
                    "epochs": 1, "batch_size": 8, "learning_rate": 2e-3, "warmup_steps": 20,
                    "corrections": {"tasks": 0, "replay": 19200, "learning_rate": 3e-4}},
           "small": {"episodes": 20000, "drills": 64000, "replay": 10000, "drill_sft": {"batch_size": 64, "micro_batch": 64},
                     "epochs": 3, "batch_size": 32, "learning_rate": 1e-3, "warmup_steps": 100}}


def build_model(out: str | Path, size: str = "tiny", envs: Sequence[str] = DEFAULT_ENVS, seed: int = 0,
                episodes: int | None = None, epochs: int | None = None, device: str = "auto",
                corrections: int | None = None, resume: bool = False) -> Path:
    """Build the tokenizer and model of ``size``, teach it to copy on drills, warm-start it
    with SFT on expert trajectories of ``envs``, then SFT it on the expert's corrections of its
    own episodes (``corrections`` tasks per env, None: the recipe's, 0: none); return ``out``.
    ``resume``: keep the stages an interrupted build of ``out`` finished, continue its SFT checkpoints."""
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; choose from {list(SIZES)}")
    from .. import sft  # torch and transformers load only when a model is built

    settings = dict(RECIPES[size])
    recipe_episodes, drills, replay = settings.pop("episodes"), settings.pop("drills"), settings.pop("replay", 0)
    correction = dict(settings.pop("corrections", {"tasks": 0}))
    if corrections is not None:
        correction["tasks"] = corrections
    drill_only = settings.pop("drill_sft", {})
    drill_settings = {**settings, "epochs": 1, **drill_only}
    if epochs:
        settings["epochs"] = epochs
    out = Path(out)
    check_same_build(out, {"size": size, "envs": list(envs), "seed": seed, "episodes": episodes, "epochs": epochs,
                           "corrections": corrections}, resume)
    base, data = out / "base", out / "expert_train.jsonl"
    if not (resume and (base / "config.json").exists() and data.exists() and (out / "tasks").exists()):
        build_base(base, size, envs, episodes or recipe_episodes, seed)
        shutil.move(base / "expert_train.jsonl", data)
        shutil.rmtree(out / "tasks", ignore_errors=True)
        shutil.move(base / "tasks", out / "tasks")
    start, episode_data = base, [str(data)]
    if drills:
        drill_data = write_drills(out / "copy_drills.jsonl", drills, seed)
        start = sft.fine_tune(sft.Config(model=str(base), data=[str(drill_data)], run_dir=str(out / "sft_drills"),
                                         seed=seed, device=device, **drill_settings), resume)
    if replay:
        episode_data.append(str(write_drills(out / "replay_drills.jsonl", replay, seed + 1)))
    config = sft.Config(model=str(start), data=episode_data, run_dir=str(out / "sft"), seed=seed, device=device,
                        **settings)
    trained = sft.fine_tune(config, resume)
    if correction["tasks"]:
        trained = correct(trained, out, envs, seed, device, settings, resume, **correction)
    for item in trained.iterdir():
        shutil.copy2(item, out / item.name)
    return out


def check_same_build(out: Path, definition: dict, resume: bool) -> None:
    """Record what the build of ``out`` is (``build.json``); a resumed build with another definition is
    refused, since its finished stages belong to the first (a folder without the file is taken as it is)."""
    record = out / "build.json"
    if resume and record.exists():
        recorded = json.loads(record.read_text(encoding="utf-8"))
        changed = sorted(key for key in definition if recorded.get(key) != definition[key])
        if changed:
            raise ValueError(f"{out} holds a build with other {', '.join(changed)} "
                             f"({ {key: recorded.get(key) for key in changed} }); build into another --out, or drop --resume")
    out.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps(definition, indent=2) + "\n", encoding="utf-8")


def correct(model: Path, out: Path, envs: Sequence[str], seed: int, device: str, settings: dict, resume: bool,
            tasks: int, replay: int = 0, learning_rate: float | None = None) -> Path:
    """One round of expert corrections: ``model`` plays ``tasks`` fresh tasks per env (drawn
    with ``seed + 1``, not the corpus's ``seed``) into ``<out>/corrections.jsonl``; SFT then goes
    on from ``model`` on them and ``replay`` episodes of ``<out>/expert_train.jsonl`` (at
    ``learning_rate``, else ``settings``'; ``resume``: the corrections collected before, and SFT from its checkpoint);
    returns the new model's directory."""
    from .. import sft
    from .corrections import Config, collect

    data = out / "corrections.jsonl"
    if not (resume and data.exists()):  # an interrupted collection leaves only its partial file
        partial = out / "corrections.jsonl.partial"
        partial.unlink(missing_ok=True)
        for name in envs:
            collect(Config(model=str(model), env_id=name, out=str(partial), tasks=tasks, seed=seed + 1, device=device))
        os.replace(partial, data)
    expert = (out / "expert_train.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    replayed = out / "corrections_replay.jsonl"
    replayed.write_text("".join(random.Random(seed).sample(expert, min(replay, len(expert)))), encoding="utf-8")
    tuned = {**settings, **({"learning_rate": learning_rate} if learning_rate else {})}
    return sft.fine_tune(sft.Config(model=str(model), data=[str(data), str(replayed)],
                                    run_dir=str(out / "sft_corrections"), seed=seed, device=device, **tuned), resume)


def write_drills(path: Path, count: int, seed: int) -> Path:
    """``count`` copy drills of ``seed`` as chat JSONL at ``path``."""
    path.write_text("".join(json.dumps(d) + "\n" for d in copy_drills(count, seed)), encoding="utf-8")
    return path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", default="models/agentgym-tiny", help="directory to write the model to")
    parser.add_argument("--size", default="tiny", choices=list(SIZES))
    parser.add_argument("--envs", nargs="+", default=list(DEFAULT_ENVS), help="environments whose expert trajectories it learns")
    parser.add_argument("--episodes", type=int, default=None, help="expert episodes per environment")
    parser.add_argument("--epochs", type=int, default=None, help="SFT epochs")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--corrections", type=int, default=None, metavar="TASKS",
                        help="tasks per environment of the last stage, expert corrections of the model's own "
                             "episodes (default: the size's recipe; 0 skips the stage)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted build of --out: finished stages are kept, SFT goes on from its checkpoint")


def run_from_args(args: argparse.Namespace) -> Path:
    start = time.time()
    out = build_model(args.out, args.size, args.envs, args.seed, args.episodes, args.epochs, args.device,
                      args.corrections, args.resume)
    print(f"built {args.size} model in {out} ({time.time() - start:.0f} s)")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run_from_args(parser.parse_args())

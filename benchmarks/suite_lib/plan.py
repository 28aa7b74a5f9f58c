"""What the suite runs: presets, each algorithm's settings, the protocol every trained run shares,
and the cells (family x level x algorithm x seed), each with its settings hash and the command that
reproduces it. Imports neither torch nor SB3 (the report reads it too)."""

from __future__ import annotations

import hashlib
import json
import shlex
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgym_envs import ENVIRONMENTS
from agentgym_envs.levels import level_ids
from benchmarks.tuning import TRIALS, TUNED, read_trials

REFERENCES = ("random", "expert")  # evaluated, not trained
FAMILIES = (*(entry.name for entry in ENVIRONMENTS), "support_team")
# Every trained algorithm of the table: each trains with the settings its equal tuning froze (benchmarks/tuning.py,
# the same search and trial count for each, scored on validation) in TUNED/<algorithm>.json, on every level.
TRAINED = ("ppo", "bc-ppo", "bc", "sb3-ppo", "sb3-maskable-ppo", "sb3-a2c", "sb3-dqn")
# SB3's published defaults for PPO, which MaskablePPO shares (stable_baselines3.PPO's signature): the rows
# "<algorithm>-defaults" train with them, beside the tuned rows, labelled as such.
SB3_PPO_DEFAULTS = {"learning_rate": 3e-4, "n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99,
                    "gae_lambda": 0.95, "clip_range": 0.2, "ent_coef": 0.0, "vf_coef": 0.5, "max_grad_norm": 0.5}
DEFAULT_ROWS = {"sb3-ppo-defaults": "sb3-ppo", "sb3-maskable-ppo-defaults": "sb3-maskable-ppo"}
SB3_N_ENVS = 8  # the envs an SB3 PPO run steps at once (PPOConfig.n_envs): a defaults row's rollout is n_steps x this
STOP_AT = 0.99  # early stopping: a run stops once validation success held this for two curve points in a row
# Our torch PPO trains on what the SB3 baselines read by default (the features observation, the flat admissible
# actions with their joint mask, the same MLP as SB3's MlpPolicy) with the project's settings for SB3's PPO: 8 envs x
# 128 steps a rollout, 4 epochs of minibatches of 256, a constant 2e-3, entropy 0.01, no value clipping
# (``trainers.sb3_baselines.PPOConfig``). Where these came from: results/suite_v0/suite.md and results/suite_notes.md.
SB3_SHAPE = {"observation": "features", "learning_rate": 2e-3, "ent_coef": 0.01, "num_envs": 8, "num_steps": 128,
             "update_epochs": 4, "anneal_lr": False, "clip_vloss": False}
# BC-PPO's cloning stage fits the MLP for 100 epochs (at BC's default 20 the clone of Tau2Retail-L0-v0's expert had
# not learned which cancellation reason a ticket asks for).
CLONING = {"bc_epochs": 100}
# The untuned presets' settings (smoke and quick: checks that the pipeline runs, not comparisons).
SETTINGS: dict[str, dict[str, object]] = {"ppo": SB3_SHAPE, "bc-ppo": {**SB3_SHAPE, **CLONING}}
# On coding's easiest level every PPO explores with entropy 0.03 (at 0.01 MaskablePPO submitted untested programs).
EXPLORING = {"ent_coef": 0.03}
FAMILY_SETTINGS: dict[str, dict[str, dict[str, object]]] = {
    "coding": {algorithm: {**SETTINGS.get(algorithm, {}), **EXPLORING} for algorithm in ("ppo", "bc-ppo", "sb3-ppo",
                                                                                           "sb3-maskable-ppo")},
}


def trainer(algorithm: str) -> str:
    """The trainer a row's algorithm runs (``sb3-ppo-defaults`` -> ``sb3-ppo``)."""
    return DEFAULT_ROWS.get(algorithm, algorithm)


def frozen_settings(algorithm: str, folder: Path | None = None) -> dict[str, Any] | None:
    """The settings ``algorithm``'s tuning froze in ``folder`` (default :data:`TUNED`; None: not tuned yet)."""
    path = (folder or TUNED) / f"{algorithm}.json"
    return dict(json.loads(path.read_text(encoding="utf-8"))["settings"]) if path.exists() else None


def settings(family: str, algorithm: str, tuned: bool = False) -> dict[str, object]:
    """The algorithm's own overrides on ``family`` (the rest: the algorithm's defaults): a defaults row's SB3
    defaults; in a tuned preset the frozen settings (the same on every family); else the untuned presets'."""
    if algorithm in DEFAULT_ROWS:
        return dict(SB3_PPO_DEFAULTS)
    if tuned and algorithm in TRAINED:
        frozen = frozen_settings(algorithm)
        if frozen is None:
            raise FileNotFoundError(f"{algorithm} has no frozen settings in {TUNED}: "
                                    f"run python benchmarks/tuning.py --algos {algorithm}")
        return frozen
    return dict(FAMILY_SETTINGS.get(family, {}).get(algorithm, SETTINGS.get(algorithm, {})))


def untuned(preset: Preset) -> list[str]:
    """The preset's algorithms that its settings need tuned but that have no frozen settings yet (skipped)."""
    return [a for a in preset.all_algorithms() if preset.tuned and a in TRAINED and frozen_settings(a) is None]


def tuning_progress(algorithms: Sequence[str], folder: Path | None = None) -> str:
    """How far the tuning of ``algorithms`` is, from the journals in ``folder`` (default :data:`TUNED`): the trials
    recorded of each, and the CPU hours of trials left (a trial runs on one core), each algorithm's at the mean CPU
    seconds of its own timed trials, else at the mean of every trained algorithm's timed trials in ``folder``
    (where some are timed)."""
    folder = folder or TUNED
    journals = {algorithm: read_trials(folder, algorithm) for algorithm in algorithms}
    done = ", ".join(f"{algorithm} {min(len(rows), TRIALS)} of {TRIALS}" for algorithm, rows in journals.items())
    every = [seconds for algorithm in TRAINED for seconds in timed_seconds(read_trials(folder, algorithm))]
    if not every:
        return f"trials recorded: {done}"
    hours = sum(max(0, TRIALS - len(rows)) * statistics.mean(timed_seconds(rows) or every)
                for rows in journals.values()) / 3600
    return (f"trials recorded: {done}; about {hours:.0f} CPU hours of trials left (each algorithm's at the mean of its "
            f"own timed trials, else at the mean of all {len(every)} timed trials: {statistics.mean(every) / 60:.0f} "
            "CPU minutes)")


def timed_seconds(rows: list[dict[str, Any]]) -> list[float]:
    """The CPU seconds of a journal's trials that recorded them."""
    return [row["cpu_s"] for row in rows if row.get("cpu_s") is not None]


def settings_text(preset: Preset) -> str:
    """The settings sentence of the page: the tuned settings' files, the defaults rows', or the overrides of every
    algorithm, then each family's own."""
    rollout = SB3_PPO_DEFAULTS["n_steps"] * SB3_N_ENVS
    defaults = (f"{', '.join(DEFAULT_ROWS)}: SB3's defaults {SB3_PPO_DEFAULTS} (with {SB3_N_ENVS} envs, rollouts of "
                f"{rollout:,} env steps: their curve points fall at rollout starts, every {rollout:,} env steps, and a "
                "run ends with the rollout that crosses its budget)")
    if preset.tuned:
        return (f"each trained algorithm's frozen tuned settings (benchmarks/tuned/<algorithm>.json, the same on every "
                f"level); {defaults}")

    def listed(overrides: dict[str, dict[str, object]]) -> str:
        return ", ".join(f"{algorithm}: {values}" for algorithm, values in overrides.items())

    families: dict[str, list[str]] = {}
    for family, overrides in FAMILY_SETTINGS.items():
        families.setdefault(listed(overrides), []).append(family)
    return "; ".join([listed(SETTINGS), *(f"on {', '.join(names)} {text}" for text, names in families.items())])


@dataclass(frozen=True)
class Preset:
    """What a preset runs: families (None: all), whether all their levels or the easiest only,
    algorithms (``extra``: more on some families), seeds, env steps per run (``family_steps``,
    ``level_steps``: own budgets), final evaluation episodes per split, and the learning-curve
    grid every trained algorithm shares (``curve_every`` env steps, ``curve_episodes`` each)."""

    levels: str  # "all" | "easiest"
    algorithms: tuple[str, ...]
    seeds: int
    env_steps: int
    eval_episodes: int
    curve_every: int
    curve_episodes: int = 50
    tuned: bool = False  # the trained algorithms train with their frozen tuned settings
    families: tuple[str, ...] | None = None
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)
    family_steps: dict[str, int] = field(default_factory=dict)
    level_steps: dict[tuple[str, str], int] = field(default_factory=dict)

    def all_algorithms(self) -> list[str]:
        """Every algorithm the preset runs on some family, in order."""
        return list(dict.fromkeys([*self.algorithms, *(a for extra in self.extra.values() for a in extra)]))

    def steps(self, family: str, level: str) -> int:
        """The env steps of a trained run on ``family``'s ``level``."""
        return self.level_steps.get((family, level), self.family_steps.get(family, self.env_steps))

    def budget_text(self) -> str:
        """The budgets in words: ``102,400 env steps (coding: 204,800)``."""
        own = [*(f"{family}: {steps:,}" for family, steps in self.family_steps.items()),
               *(f"{family} {level}: {steps:,}" for (family, level), steps in self.level_steps.items())]
        return f"{self.env_steps:,} env steps" + (f" ({'; '.join(own)})" if own else "")

    def protocol(self, algorithm: str) -> dict[str, object]:
        """The settings every trained run shares: the curve grid, its episodes, early stopping
        (and BC-PPO's cloning stage: the grid's first interval, so its curve lies on the grid)."""
        if algorithm in REFERENCES:
            return {}
        shared: dict[str, object] = {"curve_every": self.curve_every, "curve_episodes": self.curve_episodes,
                                     "early_stop": STOP_AT}
        return {**shared, "bc_steps": self.curve_every} if algorithm.startswith("bc-") else shared


GRID = 10_240  # env steps between curve points: 10 rollouts of 8 x 128 (PPO), a whole number of SB3's and A2C's
CODING_STEPS = 20 * GRID  # coding's easiest level asks for a stop rule, learnt more slowly (results/coding_notes.md)
HARD_SUPPORT_STEPS = {("customer_support", level): 20 * GRID for level in ("L2", "L3", "L4", "v1")}
PRESETS = {
    "smoke": Preset("easiest", (*REFERENCES, "ppo", "sb3-maskable-ppo"), seeds=2, env_steps=3 * 1024, eval_episodes=20,
                    curve_every=1024, curve_episodes=10, families=("customer_support",)),
    "quick": Preset("easiest", (*REFERENCES, "ppo", "sb3-maskable-ppo"), seeds=1, env_steps=3 * GRID, eval_episodes=50,
                    curve_every=GRID, family_steps={"coding": CODING_STEPS}),
    "full": Preset("all", (*REFERENCES, *TRAINED, *DEFAULT_ROWS), seeds=5, env_steps=10 * GRID, eval_episodes=100,
                   curve_every=GRID, tuned=True, family_steps={"coding": CODING_STEPS}, level_steps=HARD_SUPPORT_STEPS),
}


def level_name(env_id: str) -> str:
    """``AgentGym/Math-L1-v0`` -> ``L1``; a family's top id (``-v0``, ``-v1``) -> ``v0``, ``v1``."""
    stem, _, version = env_id.rpartition("-v")
    middle = stem.rsplit("-", 1)[-1]
    return middle if middle[:1] == "L" and middle[1:].isdigit() else f"v{version}"


@dataclass(frozen=True)
class Cell:
    """One run of the suite: where, what, which seed, its budget, and every setting it trains with."""

    env: str  # the family's name
    level: str  # "L0", ..., "v0"
    env_id: str
    algorithm: str
    seed: int
    env_steps: int  # the budget
    eval_episodes: int
    overrides: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return self.env, self.level, self.algorithm, self.seed

    @property
    def name(self) -> str:
        return f"[{self.env} {self.level} {self.algorithm} seed {self.seed}]"

    def settings_hash(self, device: str) -> str:
        """A hash of everything the row's result depends on but the seed: algorithm, env id, env
        kwargs, every setting, the budgets (env steps, evaluation episodes) and the device."""
        record = {"algorithm": self.algorithm, "env_id": self.env_id, "env_kwargs": self.overrides.get("env_kwargs", {}),
                  "settings": {k: v for k, v in self.overrides.items() if k != "env_kwargs"},
                  "total_steps": self.env_steps, "eval_episodes": self.eval_episodes, "device": device}
        return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:16]

    def run_root(self, root: str) -> str:
        """Where under ``root`` the cell's run directory goes: ``root``, or a defaults row's own folder
        (``root/sb3-ppo-defaults``: its trainer's run directory name is the tuned row's)."""
        return root if trainer(self.algorithm) == self.algorithm else f"{root}/{self.algorithm}"

    def command(self, device: str, run_root: str = "runs/reproduce") -> str:
        """The ``agentgym train`` command that runs exactly this cell (from the repository root):
        it writes the run's ``result.json`` and per-episode outcomes under :meth:`run_root` of ``run_root``."""
        words = ["agentgym", "train", self.env_id, "--algo", trainer(self.algorithm), "--seed", str(self.seed),
                 "--total-steps", str(self.env_steps), "--eval-episodes", str(self.eval_episodes), "--device", device,
                 "--run-dir", self.run_root(run_root), "--no-progress", "--no-store"]
        for name, value in sorted(self.overrides.items()):
            words += ["--set", f"{name}={setting_text(value)}"]
        return shlex.join(words)


def setting_text(value: Any) -> str:
    """A ``--set`` value as ``agentgym train`` reads it back: JSON, but a string that does not
    parse as JSON as it is (``observation=features``)."""
    if isinstance(value, str):
        try:
            json.loads(value)
        except json.JSONDecodeError:
            return value
    return json.dumps(value)


def cells(preset: Preset, families: tuple[str, ...] | list[str], untuned_too: bool = False) -> list[Cell]:
    """The runs of ``preset`` on ``families``, in the order they run: every family's easiest level
    first, then every family's next one, and so on (a partial sitting covers the ladders' bottoms). A tuned
    preset's algorithms without frozen settings are left out (:func:`untuned` names them), unless
    ``untuned_too`` (their runs' budgets, for an estimate: their settings are not frozen yet)."""
    ladders = {family: level_ids(family) for family in families}
    waiting = set(untuned(preset))
    skipped = set() if untuned_too else waiting
    planned = []
    for rung in range(max(len(ids) for ids in ladders.values()) if preset.levels == "all" else 1):
        for family, ids in ladders.items():
            if rung >= len(ids):
                continue
            level = level_name(ids[rung])
            for algorithm in (*preset.algorithms, *preset.extra.get(family, ())):
                if algorithm in skipped:
                    continue
                own = {} if algorithm in waiting else settings(family, algorithm, preset.tuned)
                overrides = {**own, **preset.protocol(algorithm)}
                planned += [Cell(family, level, ids[rung], algorithm, seed, preset.steps(family, level),
                                 preset.eval_episodes, overrides)
                            for seed in range(1 if algorithm in REFERENCES else preset.seeds)]
    return planned

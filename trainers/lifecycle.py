"""The one run lifecycle every training algorithm goes through.

A :class:`TrainRequest` (env name or id, algorithm, seed, env steps, device, run root,
overrides) becomes a :class:`Run`, is handed to the algorithm, and ends as a
:class:`TrainResult`::

    request --> canonical env id; one env built (bad input fails here: nothing is written)
            --> run directory <root>/<EnvName>__<algo>__seed<N>: run.json, TensorBoard events
            --> algorithm.train(run) -> Trained (a policy object, the env steps taken, a curve)
            --> final evaluation of the greedy policy on train and test, on the env's own reward
            --> result.json, the final table, the scenario's success criteria

Every algorithm sees the same things through :class:`Run`: the run directory, a TensorBoard
``SummaryWriter``, the device, the seed, the step budget, env factories for a split (with the
training reward the scenario declares, merged with the user's ``training_reward`` override),
vector-env construction, atomic checkpoints and the state to resume from, a progress bar, the
learning-curve evaluation, and ``run.config(ConfigClass)`` for its own hyper-parameters (the
``--set`` overrides). ``total_steps`` always counts environment steps; an algorithm may round
up to whole rollouts and reports the steps it took in :class:`Trained`.

Adding an algorithm
-------------------
Write a module with two functions:

- ``train(run: Run) -> Trained``: train for ``run.total_steps`` env steps, checkpoint into
  ``run.checkpoint_path`` (resuming from ``run.resume_state()``), return the trained policy;
- ``load_policy(checkpoint: Path, device: str) -> TrainedPolicy``: the policy back from a
  checkpoint, for ``agentgym eval <checkpoint>``.

A :class:`TrainedPolicy` is any object that builds the env it reads (``make_env(split)``: its
own observation and action wrappers, the env's own reward) and an agent for it (``agent(env)``:
a callable ``(observation, info) -> action``). Nothing here assumes a network family: torch
token policies, SB3 models and language models all fit. Then register the algorithm, from
inside or outside this package::

    from trainers.lifecycle import Algorithm, register_algorithm
    register_algorithm("my-algo", Algorithm("mypackage.my_algo:train", "mypackage.my_algo:load_policy"))

Entries are ``"module:function"`` strings imported when used, so listing algorithms costs
nothing. ``warm_start="bc"`` makes a two-stage algorithm: behaviour cloning for ``bc_steps`` of
the budget in ``<run_dir>/bc``, then this algorithm from the BC checkpoint
(``run.init_checkpoint``) for the rest.

Environments that are not gymnasium envs (PettingZoo teams) train through a single-agent
adapter that their package registers as a gymnasium id (``AgentGym/SupportTeam-v0``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
from tqdm import tqdm

from agentgym_envs import resolve_env_id
from agentgym_envs.levels import level_ids
from agentgym_envs.observe import tracing
from agentgym_envs.observe.store import RunRecorder, default_store_path, recording
from agentgym_envs.wrappers import LEVEL_KEY, Curriculum

from .vector_env import SyncStatsVectorEnv

DEFAULT_TOTAL_STEPS = 20_000  # env steps: a few minutes of PPO on CustomerSupport-v0 on 2 CPU cores
DEFAULT_EVAL_EPISODES = 100
DEFAULT_WARM_START_STEPS = 10_000  # expert steps behaviour cloning records before bc-ppo / bc-grpo
EVAL_SEED = 0  # final evaluations play episodes seeded 0, 1, ... whatever the run's seed
CURVE_SEED = 10_000  # learning-curve evaluations use other episodes than the final one
TARGET_SUCCESS = 0.95  # a run "reaches the target" when its test success is at least this
RUN_FILE = "run.json"
RESULT_FILE = "result.json"
TRAIN_CURVE_FILE = "train_curve.json"
EPISODE_METRICS = ("success", "tool_reliability", "tokens_used", "cost_reduction", LEVEL_KEY)  # logged as metrics/<name>
TRAINING_RETURN_TAG = "charts/episodic_return_training_reward"  # returns on the reward the policy trains on
LIFECYCLE_OVERRIDES = ("env_kwargs", "training_reward", "progress")  # --set names the lifecycle takes; the rest are the algorithm's


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or not one ``agentgym train`` wrote."""


# ------------------------------------------------------------------ request and result
@dataclass(frozen=True)
class TrainRequest:
    """What a user asks for. ``env``: an agentgym name (``customer_support``), an id, or any
    registered gymnasium id; ``total_steps``: environment steps; ``overrides``: ``--set``
    values, ``env_kwargs`` and ``training_reward`` for the lifecycle, every other name a field
    of the algorithm's config."""

    env: str
    algo: str = "ppo"
    seed: int = 0
    total_steps: int = DEFAULT_TOTAL_STEPS
    device: str = "auto"
    run_root: str = "runs"
    eval_episodes: int = DEFAULT_EVAL_EPISODES
    resume: bool = False
    progress: bool = True
    overrides: dict[str, Any] = field(default_factory=dict)
    num_workers: int | None = None  # Ray workers of a vector env made with vectorization="ray" (None: one per CPU)
    ray_address: str | None = None  # None: a local Ray started on demand; "auto": the cluster of this machine
    record: bool = True  # record the run and its final evaluation's episodes in the rollout store
    run_store: str | None = None  # the rollout store (None: AGENTGYM_RUN_STORE, else <run_root>/agentgym.db)
    curriculum: tuple[str, ...] = ()  # levels to train through (names like "L0" of env's family, or ids); the last is evaluated
    curriculum_threshold: float = 0.9  # train success over the latest episodes of a level that moves training up a level


@dataclass
class TrainResult:
    """The outcome of a run (``result.json``), as the benchmarks table it. ``total_steps``: env
    steps taken; ``sps``: env steps per second of training (evaluations excluded); ``curve``:
    ``(env_steps, test_success)`` points (``test_return`` for envs without a success metric);
    ``train_curve``: the same points on the train split; ``steps_to_target``: the first curve step
    at which test success reached :data:`TARGET_SUCCESS`; ``training_reward``: the ``reward_config`` the training envs used
    (the final metrics are always on the env's own reward)."""

    algo: str
    env_id: str
    seed: int
    total_steps: int
    wall_time_s: float
    sps: float
    train_metrics: dict[str, float]
    test_metrics: dict[str, float]
    curve: list[tuple[int, float]]
    steps_to_target: int | None
    run_dir: str
    training_reward: dict[str, Any] | None = None
    train_curve: list[tuple[int, float]] = field(default_factory=list)  # (env_steps, train_success), as ``curve``
    curriculum: list[str] = field(default_factory=list)  # the level ids trained through (empty: none)


class Agent(Protocol):
    def __call__(self, observation: Any, info: dict[str, Any]) -> Any: ...


class TrainedPolicy(Protocol):
    """A trained policy as the lifecycle and ``agentgym eval`` use it, whatever it is made of."""

    env_id: str

    def make_env(self, split: str) -> gym.Env:
        """The env this policy acts in (its wrappers), on ``split``, with the env's own reward."""

    def agent(self, env: gym.Env) -> Agent:
        """A greedy agent ``(observation, info) -> action`` for an env from :meth:`make_env`."""


@dataclass
class Trained:
    """What an algorithm hands back: the policy, the env steps it took, its learning curve and
    the seconds it spent training (evaluations and checkpoints excluded: the SPS figure)."""

    policy: TrainedPolicy
    steps: int
    curve: list[tuple[int, float]]
    train_seconds: float


# ------------------------------------------------------------------ algorithm registry
@dataclass(frozen=True)
class Algorithm:
    """An algorithm's entry points, as ``"module:function"`` (imported when used): ``train``
    ``(Run) -> Trained``, ``load_policy`` ``(checkpoint, device) -> TrainedPolicy``.
    ``checkpoint_name``: the file in the run directory; ``warm_start``: an algorithm run first
    (``"bc"``) whose checkpoint this one starts from; ``config``: its config dataclass, so that a
    misspelt ``--set`` fails before anything is written (None: it takes no settings);
    ``shares``: a dataclass whose fields also reach the warm start (so that this algorithm can
    load its weights)."""

    train: str
    load_policy: str
    checkpoint_name: str = "checkpoint.pt"
    warm_start: str | None = None
    config: str | None = None  # "module:Class" of its config dataclass: --set names are checked before the run starts
    shares: str | None = None  # "module:Class" whose fields --set gives the warm start too (the network's size and layout)

    def config_class(self) -> type | None:
        return entry_point(self.config) if self.config else None


TORCH_LOADER = "trainers.torch_policy:load_policy"
ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm("trainers.ppo:train", TORCH_LOADER, config="trainers.ppo:Config"),
    "grpo": Algorithm("trainers.grpo:train", TORCH_LOADER, config="trainers.grpo:Config"),
    "bc": Algorithm("trainers.bc:train", TORCH_LOADER, config="trainers.bc:Config"),
    "bc-ppo": Algorithm("trainers.ppo:train", TORCH_LOADER, warm_start="bc", config="trainers.ppo:Config",
                        shares="trainers.policy:TokenPolicyFields"),
    "bc-grpo": Algorithm("trainers.grpo:train", TORCH_LOADER, warm_start="bc", config="trainers.grpo:Config",
                         shares="trainers.policy:TokenPolicyFields"),
    **{name: Algorithm("trainers.sb3_baselines:train", "trainers.sb3_baselines:load_policy", "checkpoint.zip",
                       config=f"trainers.sb3_baselines:{config}")
       for name, config in (("sb3-ppo", "PPOConfig"), ("sb3-a2c", "A2CConfig"), ("sb3-dqn", "DQNConfig"),
                            ("sb3-maskable-ppo", "MaskablePPOConfig"))},
    **{name: Algorithm("trainers.reference:train", "trainers.reference:load_policy", "policy.json")
       for name in ("random", "expert")},
    **{name: Algorithm(f"trainers.llm.{module}:train", "trainers.llm.runtime:load_policy", "llm_state.ckpt",
                       config=f"trainers.llm.{module}:Config")
       for name, module in (("llm-grpo", "grpo"), ("llm-sft", "sft"))},
    "apo": Algorithm("trainers.llm.apo:train", "trainers.llm.prompting:load_policy", "apo_state.json",
                     config="trainers.llm.apo:Config"),
}


def register_algorithm(name: str, algorithm: Algorithm) -> None:
    """Make ``name`` trainable with ``agentgym train --algo name`` (replaces an entry of that name)."""
    ALGORITHMS[name] = algorithm


def entry_point(reference: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` string names."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def algorithm(name: str) -> Algorithm:
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def check_settings(algo: str, config_class: type | None, overrides: dict[str, Any]) -> None:
    """A clear error for overrides that are no field of ``config_class``."""
    known = {f.name for f in fields(config_class)} if config_class is not None else set()
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown {algo} setting(s) {sorted(unknown)}; settings: "
                         f"{sorted(known | set(LIFECYCLE_OVERRIDES))}")


# ------------------------------------------------------------------ environments
def canonical_env_id(env: str) -> str:
    """An agentgym name (``customer_support``, ``support_team``), a short id
    (``CustomerSupport-v0``) or any registered gymnasium id (``CartPole-v1``) -> the full id."""
    try:
        return resolve_env_id(env)
    except ValueError:
        pass
    if env in gym.registry:
        return env
    for env_id in gym.registry:
        namespace, _, name = env_id.rpartition("/")
        if namespace == "AgentGym" and env in (name, snake_case(name.rsplit("-v", 1)[0])):
            return env_id
    raise ValueError(f"unknown environment {env!r}: neither an agentgym name (agentgym list) nor a registered gymnasium id")


def level_id(env_id: str, level: str) -> str:
    """A level of ``env_id``'s family: ``"L1"`` -> ``AgentGym/CustomerSupport-L1-v0``, ``"v0"`` -> the
    family's ``-v0``; an env name or id is taken as it is."""
    try:
        return canonical_env_id(level)
    except ValueError:
        pass
    ids = level_ids(env_id)  # a clear error for an env of no family
    names = {f"L{index}": level for index, level in enumerate(ids[:-1])} | {"v0": ids[-1]}
    if level not in names:
        raise ValueError(f"no level {level!r} of {env_id}; its levels: {', '.join(names)} (agentgym list --levels)")
    return names[level]


def snake_case(name: str) -> str:
    """``SupportTeam`` -> ``support_team``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def make_env(env_id: str, split: str, env_kwargs: dict[str, Any], reward_config: dict[str, Any] | None = None) -> gym.Env:
    """One env of ``split`` (``reward_config``: the training reward, None: the env's own).
    A module-level function, so that factories built from it pickle (exact resume)."""
    kwargs = dict(env_kwargs)
    if reward_config is not None:
        kwargs["reward_config"] = {**kwargs.get("reward_config", {}), **reward_config}
    try:
        return gym.make(env_id, split=split, **kwargs)
    except TypeError as exc:
        if "unexpected keyword argument 'split'" not in str(exc):
            raise
        return gym.make(env_id, **kwargs)  # a control env (CartPole-v1) has no splits


def features_kwargs(env_id: str, env_kwargs: dict[str, Any], mask_repeats: bool) -> dict[str, Any]:
    """The ``gym.make`` arguments that give a tool-use env the features observation (and, with
    ``mask_repeats``, masks without repeated calls): an env with ``call_masks`` that offers
    ``"features"`` among its ``observations`` (``ToolUseEnv``, the team's ``ActiveAgentEnv``);
    {} for other envs (a vector observation)."""
    env = make_env(env_id, "train", env_kwargs)
    base = env.unwrapped
    tool_use = hasattr(base, "call_masks") and "features" in getattr(base, "observations", ())
    env.close()
    return {"observation": "features", "mask_repeats": mask_repeats} if tool_use else {}


def make_curriculum_env(level_ids: tuple[str, ...], split: str, env_kwargs: dict[str, Any],
                         reward_config: dict[str, Any] | None, threshold: float) -> gym.Env:
    """A :class:`~agentgym_envs.wrappers.Curriculum` over ``level_ids``, each level's env as
    :func:`make_env` makes it (module-level, so that factories of it pickle)."""
    return Curriculum([functools.partial(make_env, env_id, split, env_kwargs, reward_config) for env_id in level_ids],
                      threshold)


def checked_env(env_id: str, env_kwargs: dict[str, Any], reward_config: dict[str, Any] | None) -> dict[str, Any] | None:
    """Build (and close) one train-split env, turning any failure (a missing data set, a bad
    argument) into one clear ``ValueError``; return the env's declared ``training_reward``."""
    try:
        env = make_env(env_id, "train", env_kwargs, reward_config)
    except ValueError:
        raise
    except Exception as exc:
        raise ValueError(f"cannot make {env_id} with {env_kwargs or 'no arguments'}: {type(exc).__name__}: {exc}") from exc
    declared = getattr(env.unwrapped, "training_reward", None)
    env.close()
    return declared


def merged_training_reward(declared: dict[str, Any] | None, override: Any) -> dict[str, Any] | None:
    """The training reward: the scenario's declaration (``env.unwrapped.training_reward``, a dict
    of ``reward_config`` fields) with the user's ``training_reward`` override merged over it; an
    override of None trains on the env's own reward. None: no reward_config is passed."""
    if override is None:
        return None
    if override == "declared":
        return dict(declared) if declared else None
    if not isinstance(override, dict):
        raise ValueError(f"training_reward must be a dict of reward_config fields or null, got {override!r}")
    return {**(declared or {}), **override}


def make_vector_env(factories: list[Callable[[], gym.Env]], vectorization: str = "sync", num_workers: int | None = None,
                    ray_address: str | None = None) -> gym.vector.VectorEnv:
    """The vector env of ``factories`` with episode statistics. ``"sync"``: one process
    (:class:`~trainers.vector_env.SyncStatsVectorEnv`); ``"async"``: one subprocess per env; ``"ray"``: the envs in
    ``num_workers`` Ray actors (``RayVectorEnv``, on the Ray at ``ray_address``). All reset a
    finished sub-env in the same step, so the returned observations and masks are always the
    next decision's."""
    mode = gym.vector.AutoresetMode.SAME_STEP
    if vectorization == "sync":  # the statistics recorded in its own step (the same infos, fewer operations)
        return SyncStatsVectorEnv(factories)
    if vectorization == "async":
        envs = gym.vector.AsyncVectorEnv(factories, autoreset_mode=mode)
    elif vectorization == "ray":
        from agentgym_envs.scale import RayVectorEnv, init_ray

        init_ray(ray_address)
        envs = RayVectorEnv(factories, num_workers=num_workers, autoreset_mode=mode)
    else:
        raise ValueError(f"vectorization must be 'sync', 'async' or 'ray', got {vectorization!r}")
    return gym.wrappers.vector.RecordEpisodeStatistics(envs)


def summary_writer(run_dir: Path, purge_step: int | None = None) -> Any:
    """A TensorBoard ``SummaryWriter`` in ``run_dir``; with ``purge_step`` (a resumed run),
    events that earlier writers logged from that step on are dropped.

    TensorBoard reads a directory's event files in name order, and a file's name is the second
    it was made in, then the host, the process and a per-process counter that is not
    zero-padded: a file made in the same second as an earlier one may sort before it (counter
    10 before 9), and its events would read as older. So a writer made in a directory that
    already holds event files starts in a later second than theirs (waiting a second at most)."""
    from torch.utils.tensorboard import SummaryWriter

    made = [int(stamp) for path in Path(run_dir).glob("events.out.tfevents.*")
            if (stamp := path.name.split(".")[3]).isdigit()]
    if made and (wait := max(made) + 1 - time.time()) > 0:
        time.sleep(min(wait, 1.0))  # a file from a clock ahead of this one does not hold the run up
    return SummaryWriter(str(run_dir), purge_step=purge_step)


# ------------------------------------------------------------------ the run
@dataclass
class Run:
    """One run as an algorithm sees it. Built by :func:`train`; algorithms read its fields
    and call its methods, and never build run directories, writers or final reports."""

    request: TrainRequest
    algo: str
    env_id: str
    run_dir: Path
    device: str  # "cpu" | "cuda" ("auto" resolved)
    env_kwargs: dict[str, Any]
    training_reward: dict[str, Any] | None  # the reward_config the training envs use (None: the env's own)
    checkpoint_path: Path
    overrides: dict[str, Any]  # the algorithm's config fields
    init_checkpoint: Path | None = None  # a warm start's checkpoint (BC's, for bc-ppo / bc-grpo)
    total_steps: int = DEFAULT_TOTAL_STEPS
    curriculum: tuple[str, ...] = ()  # the level ids training moves through (empty: the run's env only)
    _writer: Any = None

    @property
    def seed(self) -> int:
        return self.request.seed

    @property
    def resume(self) -> bool:
        return self.request.resume

    # -------------------------------------------------------------- configuration
    def config(self, config_class: type) -> Any:
        """``config_class`` with the run's overrides applied; a clear error names unknown fields.
        The checkpoint's config when resuming, so a resumed run keeps its hyper-parameters."""
        state = self.resume_state()
        if state is not None and "config" in state:
            return config_class(**state["config"])
        check_settings(self.algo, config_class, self.overrides)
        return config_class(**self.overrides)

    # -------------------------------------------------------------- environments
    def env_factory(self, split: str = "train", training: bool = True,
                    extra_kwargs: dict[str, Any] | None = None) -> Callable[[], gym.Env]:
        """A picklable factory of base envs of ``split``; ``training``: with :attr:`training_reward`, and
        through the request's curriculum when it has one (evaluations play the run's own env);
        ``extra_kwargs``: ``gym.make`` arguments the algorithm adds (its observation, say)."""
        env_kwargs = {**self.env_kwargs, **(extra_kwargs or {})}
        if training and self.curriculum:
            return functools.partial(make_curriculum_env, self.curriculum, split, env_kwargs, self.training_reward,
                                     self.request.curriculum_threshold)
        return functools.partial(make_env, self.env_id, split, env_kwargs, self.training_reward if training else None)

    def make_env(self, split: str = "train", training: bool = True) -> gym.Env:
        return self.env_factory(split, training)()

    def make_vector_env(self, factories: list[Callable[[], gym.Env]], vectorization: str = "sync") -> gym.vector.VectorEnv:
        return make_vector_env(factories, vectorization, self.request.num_workers, self.request.ray_address)

    # -------------------------------------------------------------- logging
    @property
    def writer(self):
        """The run's TensorBoard ``SummaryWriter``; a resumed run drops events after its checkpoint."""
        if self._writer is None:
            state = self.resume_state()
            step = int(state.get("global_step", 0)) if state else 0
            self._writer = summary_writer(self.run_dir, step or None)
        return self._writer

    def progress_bar(self, total: int, initial: int = 0, unit: str = "step") -> tqdm:
        """A progress bar (off with ``TrainRequest(progress=False)``). Postfix names: ``train_ret``
        is the mean episode return on the training reward, ``success`` the success rate."""
        return tqdm(total=total, initial=initial, unit=unit, desc=self.algo, disable=not self.request.progress,
                    dynamic_ncols=True)

    def curve_point(self, policy: TrainedPolicy, step: int, episodes: int) -> float:
        """Greedy success (or mean return, for envs without one) over ``episodes`` episodes of each
        split, logged as ``eval/test_success`` and ``eval/train_success`` (``..._return``); the
        train point is kept in ``train_curve.json`` (the result's ``train_curve``); returns the test value."""
        values = {}
        for split in ("train", "test"):
            metrics = evaluate_policy(policy, split, episodes, seed=CURVE_SEED)
            tag, values[split] = ("success", metrics["success"]) if "success" in metrics else ("return", metrics["return"])
            self.writer.add_scalar(f"eval/{split}_{tag}", values[split], step)
        curve = [point for point in self.train_curve() if point[0] < step] + [(step, values["train"])]
        write_json_atomic(self.run_dir / TRAIN_CURVE_FILE, curve)
        return values["test"]

    def train_curve(self) -> list[tuple[int, float]]:
        """The train-split points :meth:`curve_point` has written (a resumed run's included)."""
        path = self.run_dir / TRAIN_CURVE_FILE
        return [(int(s), float(v)) for s, v in json.loads(path.read_text(encoding="utf-8"))] if path.exists() else []

    # -------------------------------------------------------------- checkpoints
    @functools.cached_property
    def _resume_state(self) -> dict[str, Any] | None:
        if not (self.request.resume and self.checkpoint_path.exists()):
            return None
        return entry_point("trainers.checkpoints:load")(self.checkpoint_path)

    def resume_state(self) -> dict[str, Any] | None:
        """The torch checkpoint's payload when resuming a run that has one, else None."""
        return self._resume_state if self.checkpoint_path.suffix == ".pt" else None

    def save_checkpoint(self, payload: dict[str, Any]) -> None:
        """Write a torch checkpoint atomically (with ``algo`` and the env id added)."""
        entry_point("trainers.checkpoints:save")(self.checkpoint_path, {"algo": self.algo, "env_id": self.env_id, **payload})


# ------------------------------------------------------------------ evaluation
def evaluate_policy(policy: TrainedPolicy, split: str, episodes: int, seed: int = EVAL_SEED,
                    recorder: RunRecorder | None = None) -> dict[str, float]:
    """Mean metrics of ``policy``'s greedy agent over ``episodes`` episodes of ``split`` seeded
    ``seed, seed + 1, ...``: every ``info["metrics"]`` entry plus ``return`` (the env's own reward);
    ``recorder``: the rollout-store run that records the episodes."""
    from agentgym_envs.policies import evaluate

    env = policy.make_env(split)
    try:
        return evaluate(env, policy.agent(env), episodes=episodes, split=split, seed=seed, recorder=recorder)
    finally:
        env.close()


def first_step_at_target(curve: list[tuple[int, float]], target: float = TARGET_SUCCESS) -> int | None:
    """The first env step of ``curve`` at which test success reached ``target``."""
    return next((steps for steps, success in sorted(curve) if success >= target), None)


def final_report(result: TrainResult, eval_episodes: int) -> str:
    """The metrics table on both splits, what ``return`` means, and the success criteria."""
    from agentgym_envs import success_criteria
    from agentgym_envs.tables import DEFAULT_COLUMNS, criteria_report, format_table

    rows = [{"split": "train", **result.train_metrics}, {"split": "test", **result.test_metrics}]
    columns = ["split", *(c for c in (*DEFAULT_COLUMNS, "handoffs") if c in result.test_metrics)]
    text = (f"\n{result.env_id}, {result.algo}, seed {result.seed}: {result.total_steps} env steps, greedy policy, "
            f"{eval_episodes} episodes per split\n{format_table(rows, columns)}\n"
            "return: the env's own reward (the default reward_config)")
    if result.training_reward is not None:
        text += f"; training used reward_config {result.training_reward}"
    criteria = success_criteria(result.env_id)
    if criteria:
        text += f"\n\nsuccess criteria (test split):\n{criteria_report(result.test_metrics, criteria)}"
    return text


# ------------------------------------------------------------------ files
def hyperparameter_table(config: dict[str, Any]) -> str:
    """A run's hyper-parameters as the markdown table TensorBoard's text tab shows."""
    return "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in config.items())


def run_dir_for(run_root: str | Path, env_id: str, algo: str, seed: int) -> Path:
    """``<run_root>/<EnvName>__<algo>__seed<seed>``: stable, so ``--resume`` finds it."""
    return Path(run_root) / f"{env_id.split('/')[-1]}__{algo}__seed{seed}"


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write ``data`` as JSON so that a reader never sees a half-written file."""
    path = Path(path)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump(data, file, indent=2, allow_nan=True)
    os.chmod(tmp, 0o666 & ~current_umask())
    os.replace(tmp, path)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_result(run_dir: str | Path) -> TrainResult:
    """The :class:`TrainResult` a finished run wrote to ``run_dir``."""
    data = json.loads((Path(run_dir) / RESULT_FILE).read_text(encoding="utf-8"))
    for name in ("curve", "train_curve"):
        data[name] = [tuple(point) for point in data.get(name, [])]
    return TrainResult(**data)


def run_info(checkpoint: str | Path) -> dict[str, Any]:
    """The ``run.json`` beside a checkpoint (its run's algorithm, env id, seed...);
    :class:`CheckpointError` when there is none: the file is not a checkpoint ``agentgym train`` wrote."""
    path = Path(checkpoint)
    info_file = (path if path.is_dir() else path.parent) / RUN_FILE
    if not path.exists():
        raise CheckpointError(f"no such file: {path}")
    try:
        return json.loads(info_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CheckpointError(f"{path} is not an agentgym checkpoint: no readable {RUN_FILE} beside it "
                              f"(agentgym train writes one into every run directory)") from exc


def load_trained_policy(checkpoint: str | Path, device: str = "auto") -> TrainedPolicy:
    """The policy a checkpoint of ``agentgym train`` holds (a run directory works too), for any
    algorithm: the algorithm named in the run's ``run.json`` loads it."""
    path = Path(checkpoint)
    info = run_info(path)
    entry = algorithm(info["algo"])
    if path.is_dir():
        path = path / entry.checkpoint_name
    elif path.name != entry.checkpoint_name:
        raise CheckpointError(f"{path} is not an agentgym checkpoint; its run's ({info['algo']}) checkpoint is "
                              f"{path.parent / entry.checkpoint_name}")
    return entry_point(entry.load_policy)(path, resolve_device(device))


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when available, else ``"cpu"``; a clear error for missing CUDA."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available (use --device cpu or auto)")
    return device


# ------------------------------------------------------------------ the lifecycle
def start(request: TrainRequest, algo: str | None = None, run_dir: Path | None = None, total_steps: int | None = None,
          overrides: dict[str, Any] | None = None, init_checkpoint: Path | None = None, fresh_dir: Path | None = None,
          clear: bool = True) -> Run:
    """Check the request and open its run: the env is built once first (a missing data set or a
    bad env argument fails here, before any directory is created); a fresh run starts from an
    empty directory (``fresh_dir``, when given, is the one emptied: a two-stage run's whole
    directory; ``clear=False``: nothing is emptied); ``run.json`` records the request."""
    algo = algo or request.algo
    entry = algorithm(algo)
    env_id = canonical_env_id(request.env)
    curriculum = tuple(level_id(env_id, level) for level in request.curriculum)
    env_id = curriculum[-1] if curriculum else env_id
    overrides = dict(request.overrides if overrides is None else overrides)
    env_kwargs = overrides.pop("env_kwargs", None) or {}
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"env_kwargs must be a dict of gym.make arguments, got {env_kwargs!r}")
    reward_override = overrides.pop("training_reward", "declared")
    for level in curriculum[:-1]:
        checked_env(level, env_kwargs, None)
    declared = checked_env(env_id, env_kwargs, None)
    training_reward = merged_training_reward(declared, reward_override)
    if training_reward is not None:
        checked_env(env_id, env_kwargs, training_reward)  # a bad reward field fails now
    check_settings(algo, entry.config_class(), overrides)
    run_dir = run_dir or run_dir_for(request.run_root, env_id, algo, request.seed)
    fresh_dir = fresh_dir or run_dir
    if clear and fresh_dir.exists() and not request.resume:
        shutil.rmtree(fresh_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = Run(request, algo, env_id, run_dir, resolve_device(request.device), env_kwargs, training_reward,
              run_dir / entry.checkpoint_name, overrides, init_checkpoint,
              request.total_steps if total_steps is None else total_steps, curriculum)
    write_json_atomic(run_dir / RUN_FILE, {"algo": algo, "env_id": env_id, "seed": request.seed,
                                           "total_steps": run.total_steps, "env_kwargs": env_kwargs,
                                           "training_reward": training_reward, "overrides": overrides,
                                           "curriculum": list(curriculum)})
    return run


def train(request: TrainRequest) -> TrainResult:
    """Carry ``request`` from start to its final report (see the module docstring), inside one
    run span while tracing is on."""
    if "progress" in request.overrides:  # --set progress=false: the progress bar, as --no-progress
        overrides = {k: v for k, v in request.overrides.items() if k != "progress"}
        request = replace(request, progress=bool(request.overrides["progress"]), overrides=overrides)
    with tracing.run_span("train", {"agentgym.env.id": request.env, "agentgym.algo": request.algo,
                                    "agentgym.seed": request.seed, "agentgym.total_steps": request.total_steps}) as span:
        return _train(request, span)


def _train(request: TrainRequest, span: Any) -> TrainResult:
    entry = algorithm(request.algo)
    started = time.perf_counter()
    warm, overrides = None, None
    if entry.warm_start:
        overrides = {k: v for k, v in request.overrides.items() if not k.startswith(f"{entry.warm_start}_")}
        # a misspelt setting of the second stage fails before the first stage trains
        check_settings(request.algo, entry.config_class(), {k: v for k, v in overrides.items() if k not in LIFECYCLE_OVERRIDES})
        warm = warm_start(request, entry.warm_start)
    budget = max(request.total_steps - warm.total_steps, 0) if warm else None
    run = start(request, overrides=overrides, total_steps=budget, clear=warm is None,
                init_checkpoint=Path(warm.run_dir) / ALGORITHMS[entry.warm_start].checkpoint_name if warm else None)
    print(f"{run.algo} on {run.env_id}, seed {run.seed}, {run.total_steps} env steps, device {run.device}; "
          f"run directory {run.run_dir}")
    with recorded(request, run, span) as recorder:
        trained = entry_point(entry.train)(run)
        result = finish(run, trained, request.eval_episodes, time.perf_counter() - started, recorder)
        if warm is not None:  # one budget, one curve: the warm start's steps and time count
            result.total_steps += warm.total_steps
            result.wall_time_s += warm.wall_time_s
            result.curve = [(step + warm.total_steps, value) for step, value in result.curve]
            result.train_curve = [(step + warm.total_steps, value) for step, value in result.train_curve]
            result.steps_to_target = first_step_at_target(result.curve)
            write_json_atomic(run.run_dir / RESULT_FILE, asdict(result))
        if recorder is not None:
            recorder.summary = run_figures(result)
    print(final_report(result, request.eval_episodes))
    print(f"\nrun directory: {run.run_dir}  (tensorboard --logdir {request.run_root})")
    return result


@contextlib.contextmanager
def recorded(request: TrainRequest, run: Run, span: Any) -> Iterator[RunRecorder | None]:
    """The run in the rollout store (None when ``request.record`` is off): running while the
    block runs, then finished with ``recorder.summary``, or failed."""
    if not request.record:
        yield None
        return
    path = request.run_store or default_store_path(request.run_root)
    config = json.loads((run.run_dir / RUN_FILE).read_text(encoding="utf-8"))
    version = ("policy", {"algo": run.algo, "checkpoint": str(run.checkpoint_path.resolve())})
    with recording(path, "train", run.run_dir.name, config, run.env_id, version) as recorder:
        recorder.store.set_trace(recorder.run_id, *tracing.span_ids(span))
        print(f"run {recorder.run_id} in {path}")
        yield recorder


def run_figures(result: TrainResult) -> dict[str, Any]:
    """A training run's figures for the rollout store: steps, speed, and both splits' metrics."""
    figures: dict[str, Any] = {"total_steps": result.total_steps, "sps": result.sps, "wall_time_s": result.wall_time_s,
                               "steps_to_target": result.steps_to_target}
    for split, metrics in (("train", result.train_metrics), ("test", result.test_metrics)):
        figures.update({f"{split}_{name}": value for name, value in metrics.items()})
    return figures


def warm_start(request: TrainRequest, stage: str) -> TrainResult:
    """Run ``stage`` (``bc``) as the first part of a two-stage run, in ``<run_dir>/<stage>``:
    ``<stage>_steps`` env steps (default :data:`DEFAULT_WARM_START_STEPS`), ``<stage>_<field>``
    overrides, and the fields of the algorithm's ``shares`` (the network's size and layout: the
    next stage starts from these weights). A resumed run reuses a finished stage."""
    env_id = canonical_env_id(request.env)
    stage_dir = run_dir_for(request.run_root, env_id, request.algo, request.seed) / stage
    prefix = f"{stage}_"
    overrides = {k.removeprefix(prefix): v for k, v in request.overrides.items() if k.startswith(prefix)}
    entry = algorithm(request.algo)
    shared = {f.name for f in fields(entry_point(entry.shares))} if entry.shares else set()
    overrides.update({k: v for k, v in request.overrides.items() if k in shared and k not in overrides})
    overrides.update({k: v for k, v in request.overrides.items() if k in LIFECYCLE_OVERRIDES})
    steps = int(overrides.pop("steps", DEFAULT_WARM_START_STEPS))
    if request.resume and (stage_dir / RESULT_FILE).exists():
        return load_result(stage_dir)
    stage_request = replace(request, algo=stage, total_steps=min(steps, request.total_steps), overrides=overrides)
    run = start(stage_request, run_dir=stage_dir, fresh_dir=stage_dir.parent)
    trained = entry_point(algorithm(stage).train)(run)
    return finish(run, trained, 0, trained.train_seconds)


def final_curve(curve: list[tuple[int, float]], steps: int, metrics: dict[str, float], measure: str) -> list[tuple[int, float]]:
    """``curve`` ended by the final evaluation's point (when it has one and the curve ends earlier)."""
    if metrics and (not curve or curve[-1][0] < steps):
        return [*curve, (steps, metrics[measure])]
    return list(curve)


def finish(run: Run, trained: Trained, eval_episodes: int, wall_time_s: float,
           recorder: RunRecorder | None = None) -> TrainResult:
    """The final evaluation on both splits (the env's own reward, its episodes recorded by
    ``recorder``), ``result.json``."""
    metrics = {split: evaluate_policy(trained.policy, split, eval_episodes, recorder=recorder) if eval_episodes else {}
               for split in ("train", "test")}
    measure = "success" if "success" in metrics["test"] else "return"
    curve = final_curve(list(trained.curve), trained.steps, metrics["test"], measure)
    for name, value in metrics["test"].items():
        run.writer.add_scalar(f"final/test_{'env_return' if name == 'return' else name}", value, trained.steps)
    run.writer.close()
    result = TrainResult(
        algo=run.algo, env_id=run.env_id, seed=run.seed, total_steps=trained.steps, wall_time_s=wall_time_s,
        sps=trained.steps / trained.train_seconds if trained.train_seconds > 0 else float("nan"),
        train_metrics=metrics["train"], test_metrics=metrics["test"], curve=curve,
        steps_to_target=first_step_at_target(curve) if measure == "success" else None, run_dir=str(run.run_dir),
        training_reward=run.training_reward, train_curve=final_curve(run.train_curve(), trained.steps, metrics["train"], measure),
        curriculum=list(run.curriculum),
    )
    write_json_atomic(run.run_dir / RESULT_FILE, asdict(result))
    return result

"""What a training algorithm sees of its run: :class:`Run` (the run directory, TensorBoard
writer, device, seed, step budget, env factories, vector envs, checkpoints, progress bar and
learning-curve evaluation), what it hands back (:class:`Trained`, a :class:`TrainedPolicy`),
the env helpers (:func:`make_env`, :func:`make_vector_env`, :func:`canonical_env_id`) and the
file and device helpers algorithms share.

The driver that builds a run, calls the algorithm and reports (``ALGORITHMS``, ``train``,
``start``, ``finish``) is :mod:`trainers.lifecycle`; algorithms import this module, never that one.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import NoneType, UnionType
from typing import Any, Protocol, get_args, get_type_hints

import gymnasium as gym
from tqdm import tqdm

from agentgym_envs import resolve_env_id
from agentgym_envs.observe.store import RunRecorder
from agentgym_envs.wrappers import LEVEL_KEY, Curriculum

from .vector_env import SyncStatsVectorEnv

DEFAULT_TOTAL_STEPS = 20_000  # env steps: a few minutes of PPO on CustomerSupport-v0 on 2 CPU cores
DEFAULT_EVAL_EPISODES = 100
EVAL_SEED = 0  # final evaluations play episodes seeded 0, 1, ... whatever the run's seed
CURVE_SEED = 10_000  # learning-curve evaluations use other episodes than the final one
CURVE_SPLIT = "validation"  # learning curves, early stopping and model selection read this split; test is read once, at the end
FALLBACK_CURVE_SPLIT = "test"  # the curve of an env without a validation split (a -v0 id): its tags and result name it
EARLY_STOP_POINTS = 2  # early stopping: this many consecutive curve points at or above the run's ``early_stop``
RUN_FILE = "run.json"
TRAIN_CURVE_FILE = "train_curve.json"
EPISODE_METRICS = ("success", "tool_reliability", "tokens_used", "cost_reduction", LEVEL_KEY)  # logged as metrics/<name>
TRAINING_RETURN_TAG = "charts/episodic_return_training_reward"  # returns on the reward the policy trains on
# --set names the lifecycle takes; the rest are the algorithm's. curve_every: env steps between learning-curve points
# (the same grid for every algorithm); curve_episodes: episodes per point; early_stop: the curve success at which, held
# for EARLY_STOP_POINTS points in a row, training stops (every algorithm the same rule)
CURVE_OVERRIDES = ("curve_every", "curve_episodes", "early_stop")
LIFECYCLE_OVERRIDES = ("env_kwargs", "training_reward", "progress", *CURVE_OVERRIDES)


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or not one ``agentgym train`` wrote."""


class RunFileError(ValueError):
    """A run directory's file that cannot be read as what it holds (damaged, cut short or edited), or a
    run directory that ``--resume`` would train over."""


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


def entry_point(reference: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` string names."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def check_settings(algo: str, config_class: type | None, overrides: dict[str, Any]) -> None:
    """A clear error for overrides that are no field of ``config_class``, or whose value is not of
    the field's type (``--set anneal_lr=False`` is the string ``"False"``, which Python reads as true)."""
    known = {f.name for f in fields(config_class)} if config_class is not None else set()
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown {algo} setting(s) {sorted(unknown)}; settings: "
                         f"{sorted(known | set(LIFECYCLE_OVERRIDES))}")
    hints = get_type_hints(config_class) if overrides else {}
    for name, value in overrides.items():
        expected = scalar_types(hints[name])
        if expected and not setting_fits(value, expected):
            raise ValueError(f"{algo} setting {name} takes {' or '.join(SETTING_SPELLING[t] for t in expected)}, "
                             f"got {value!r} ({type(value).__name__})")


# the scalar types a setting's value is checked against, as ``--set`` (JSON) spells them
SETTING_SPELLING = {bool: "true or false", int: "an integer", float: "a number", str: "a string", NoneType: "null"}


def setting_fits(value: Any, expected: tuple[type, ...]) -> bool:
    """Whether ``value`` is of one of ``expected``: a bool only where bool is (not for an integer
    field), an integer also where a float is."""
    if isinstance(value, bool):
        return bool in expected
    return isinstance(value, expected) or (isinstance(value, int) and float in expected)


def scalar_types(hint: Any) -> tuple[type, ...]:
    """The types a value of a field annotated ``hint`` may have, where they are all scalars
    (``float | None`` -> float, None; an integer is a float's value too); () for other fields."""
    options = get_args(hint) if isinstance(hint, UnionType) else (hint,)
    return options if all(option in SETTING_SPELLING for option in options) else ()


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


def curve_split_for(env_id: str, env_kwargs: dict[str, Any]) -> str:
    """:data:`CURVE_SPLIT` when ``env_id`` has that split, else :data:`FALLBACK_CURVE_SPLIT` (an
    env made before validation splits existed, whose ids stay registered as they were)."""
    try:
        make_env(env_id, CURVE_SPLIT, env_kwargs).close()
    except ValueError:
        return FALLBACK_CURVE_SPLIT
    return CURVE_SPLIT


def make_curriculum_env(level_ids: tuple[str, ...], split: str, env_kwargs: dict[str, Any],
                         reward_config: dict[str, Any] | None, threshold: float) -> gym.Env:
    """A :class:`~agentgym_envs.wrappers.Curriculum` over ``level_ids``, each level's env as
    :func:`make_env` makes it (module-level, so that factories of it pickle)."""
    return Curriculum([functools.partial(make_env, env_id, split, env_kwargs, reward_config) for env_id in level_ids],
                      threshold)


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
    curve_every: int | None = None  # env steps between curve points (None: the algorithm's own interval)
    curve_episodes: int | None = None  # episodes per curve point (None: the algorithm's own number)
    early_stop: float | None = None  # stop once the curve held this success for EARLY_STOP_POINTS points (None: never)
    curve_split: str = CURVE_SPLIT  # the split the learning curve reads (curve_split_for)
    on_checkpoint: Callable[[], None] | None = None  # called once each checkpoint is written (the lifecycle's clock)
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

    def curve_interval(self, own: int) -> int:
        """Env steps between learning-curve points: the run's ``curve_every`` (one grid for every
        algorithm), else the algorithm's ``own``."""
        return self.curve_every or own

    def curve_point(self, policy: TrainedPolicy, step: int, episodes: int) -> float:
        """Greedy success (or mean return, for envs without one) over ``episodes`` episodes (the
        run's ``curve_episodes`` when set) of the run's ``curve_split`` and of train, logged as
        ``eval/validation_success`` and ``eval/train_success`` (``..._return``); the train point is
        kept in ``train_curve.json`` (the result's ``train_curve``); returns the curve split's value.
        Where the env has a validation split, the test split is never read here: the final
        evaluation reads it once."""
        values = {}
        for split in (self.curve_split, "train"):
            metrics = evaluate_policy(policy, split, self.curve_episodes or episodes, seed=CURVE_SEED)
            tag, values[split] = ("success", metrics["success"]) if "success" in metrics else ("return", metrics["return"])
            self.writer.add_scalar(f"eval/{split}_{tag}", values[split], step)
        curve = [point for point in self.train_curve() if point[0] < step] + [(step, values["train"])]
        write_json_atomic(self.run_dir / TRAIN_CURVE_FILE, curve)
        return values[self.curve_split]

    def early_stopped(self, curve: list[tuple[int, float]]) -> bool:
        """Whether ``curve`` (the :data:`CURVE_SPLIT` points so far) ends with
        :data:`EARLY_STOP_POINTS` points at or above the run's ``early_stop``: training stops there."""
        last = [value for _, value in curve[-EARLY_STOP_POINTS:]]
        return self.early_stop is not None and len(last) == EARLY_STOP_POINTS and min(last) >= self.early_stop

    def train_curve(self) -> list[tuple[int, float]]:
        """The train-split points :meth:`curve_point` has written (a resumed run's included)."""
        path = self.run_dir / TRAIN_CURVE_FILE
        if not path.exists():
            return []
        points = read_run_json(path, list)
        try:
            return [(int(s), float(v)) for s, v in points]
        except (TypeError, ValueError) as exc:  # a point that is no (step, value) pair
            raise RunFileError(f"{path} holds no list of (step, success) points ({exc}): restore it, or start the "
                               "run afresh") from exc

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
        if self.on_checkpoint is not None:
            self.on_checkpoint()


# ------------------------------------------------------------------ evaluation
def evaluate_policy(policy: TrainedPolicy, split: str, episodes: int, seed: int = EVAL_SEED,
                    recorder: RunRecorder | None = None, **options: Any) -> dict[str, float]:
    """Mean metrics of ``policy``'s greedy agent over ``episodes`` episodes of ``split`` seeded
    ``seed, seed + 1, ...``: every ``info["metrics"]`` entry plus ``return`` (the env's own reward);
    ``recorder``: the rollout-store run that records the episodes; ``options``: more of
    :func:`~agentgym_envs.evaluation.evaluate`'s (``output``, ``resume``, ``trials``)."""
    from agentgym_envs.evaluation import evaluate

    env = policy.make_env(split)
    try:
        return evaluate(env, policy.agent(env), episodes=episodes, split=split, seed=seed, recorder=recorder, **options)
    finally:
        env.close()


def hyperparameter_table(config: dict[str, Any]) -> str:
    """A run's hyper-parameters as the markdown table TensorBoard's text tab shows."""
    return "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in config.items())


def run_dir_for(run_root: str | Path, env_id: str, algo: str, seed: int) -> Path:
    """``<run_root>/<EnvName>__<algo>__seed<seed>``: stable, so ``--resume`` finds it."""
    return Path(run_root) / f"{env_id.split('/')[-1]}__{algo}__seed{seed}"


def read_run_json(path: Path, kind: type[dict] | type[list] = dict) -> Any:
    """The ``kind`` (a dict or a list) that the JSON file ``path`` of a run directory holds;
    :class:`RunFileError` naming the file when it is unreadable or holds something else."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:  # a JSONDecodeError is a ValueError
        raise RunFileError(f"{path} is unreadable ({type(exc).__name__}: {exc}); the files agentgym train writes are "
                           "replaced whole, so it was damaged or edited: restore it, or start the run afresh") from exc
    if not isinstance(data, kind):
        raise RunFileError(f"{path} holds a JSON {type(data).__name__}, not the {kind.__name__} agentgym train writes "
                           "there: restore it, or start the run afresh")
    return data


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


def run_info(checkpoint: str | Path) -> dict[str, Any]:
    """The ``run.json`` beside a checkpoint (its run's algorithm, env id, seed...);
    :class:`CheckpointError` when there is none: the file is not a checkpoint ``agentgym train`` wrote."""
    path = Path(checkpoint)
    info_file = (path if path.is_dir() else path.parent) / RUN_FILE
    if not path.exists():
        raise CheckpointError(f"no such file: {path}")
    try:
        info = read_run_json(info_file)
    except RunFileError as exc:
        raise CheckpointError(f"{path} is not an agentgym checkpoint: no readable {RUN_FILE} beside it "
                              f"(agentgym train writes one into every run directory): {exc}") from exc
    if not isinstance(info.get("algo"), str):
        raise CheckpointError(f"{info_file} names no algorithm (its \"algo\"): not the {RUN_FILE} agentgym train writes")
    return info


def resolve_device(device: str) -> str:
    """``"auto"`` -> ``"cuda"`` when available, else ``"cpu"``; a clear error for missing CUDA."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available (use --device cpu or auto)")
    return device

"""The one run lifecycle every training algorithm goes through.

A :class:`TrainRequest` (env name or id, algorithm, seed, env steps, device, run root,
overrides) becomes a :class:`Run`, is handed to the algorithm, and ends as a
:class:`TrainResult`::

    request --> canonical env id; one env built (bad input fails here: nothing is written)
            --> run directory <root>/<EnvName>__<algo>__seed<N>: run.json, TensorBoard events
            --> algorithm.train(run) -> Trained (a policy object, the env steps taken, a curve)
            --> final evaluation of the greedy policy on train and test, on the env's own reward
            --> result.json, the final table, the scenario's success criteria

This module is the driver: the algorithm registry (:data:`ALGORITHMS`), :func:`train`,
:func:`start` and what it checks first (env ids and levels, env arguments, the training reward,
a resumed run's settings), :func:`finish`, the final report, resuming. What an algorithm sees of
its run (:class:`~trainers.run.Run`, :class:`~trainers.run.Trained`, env factories, writers, file
and device helpers) is :mod:`trainers.run`: algorithms, tools and tests import those names from
there, and algorithms never import this module.

Every algorithm sees the same things through :class:`Run`: the run directory, a TensorBoard
``SummaryWriter``, the device, the seed, the step budget, env factories for a split (with the
training reward the scenario declares, merged with the user's ``training_reward`` override),
vector-env construction, atomic checkpoints and the state to resume from, a progress bar, the
learning-curve evaluation, and ``run.config(ConfigClass)`` for its own hyper-parameters (the
``--set`` overrides). ``total_steps`` always counts environment steps; an algorithm may round
up to whole rollouts and reports the steps it took in :class:`Trained`.

Adding an algorithm
-------------------
Write a module with two functions (``from trainers.run import Run, Trained``):

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

or name the module itself as the algorithm (``agentgym train ENV --algo mypackage.my_algo``): a
dotted path is registered on first use from the module's ``train``, ``load_policy``, ``Config``
and ``CHECKPOINT_NAME`` (:func:`module_algorithm`), in any process, a Ray worker's too.
``agentgym train --import mypackage.plugins`` imports a module that registers its names first.

Entries are ``"module:function"`` strings imported when used, so listing algorithms costs
nothing. ``warm_start="bc"`` makes a two-stage algorithm: behaviour cloning for ``bc_steps`` of
the budget in ``<run_dir>/bc``, then this algorithm from the BC checkpoint
(``run.init_checkpoint``) for the rest.

Environments that are not gymnasium envs (PettingZoo teams) train through a single-agent
adapter that their package registers as a gymnasium id (``AgentGym/SupportTeam-v0``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agentgym_envs.levels import level_ids
from agentgym_envs.observe import tracing
from agentgym_envs.observe.store import RunRecorder, default_store_path, recording

from .run import (
    CURVE_OVERRIDES,
    CURVE_SPLIT,
    LIFECYCLE_OVERRIDES,
    RUN_FILE,
    CheckpointError,
    Run,
    RunFileError,
    Trained,
    TrainedPolicy,
    TrainRequest,
    canonical_env_id,
    check_settings,
    curve_split_for,
    entry_point,
    evaluate_policy,
    make_env,
    read_run_json,
    resolve_device,
    run_dir_for,
    run_info,
    write_json_atomic,
)

DEFAULT_WARM_START_STEPS = 10_000  # expert steps behaviour cloning records before bc-ppo / bc-grpo
TARGET_SUCCESS = 0.95  # a run "reaches the target" when its curve's success (validation; test on a -v0 id) is at least this
RESULT_FILE = "result.json"
WALL_FILE = "wall.json"  # a run's seconds of training and of final evaluation, summed over its sittings


class RunMismatchError(ValueError):
    """A resumed run directory that holds a run of other settings (its checkpoint would carry them on)."""


def check_same_run(run_dir: Path, record: dict[str, Any], free: tuple[str, ...] = ()) -> None:
    """Raise :class:`RunMismatchError` when ``run_dir``'s ``run.json`` records other values than
    ``record`` for any of its keys (the budget may differ: a resumed run can be extended), the
    ``overrides`` named in ``free`` (an algorithm's budget or endpoint settings) left out."""
    path = run_dir / RUN_FILE
    if not path.exists():
        return
    try:
        old = read_run_json(path)
    except RunFileError:
        if not any((run_dir / name).exists() for name in {entry.checkpoint_name for entry in ALGORITHMS.values()}):
            return  # no checkpoint: nothing carries on, the run starts afresh
        raise  # a checkpoint would carry on settings that cannot be checked
    new = json.loads(json.dumps(record))  # as run.json holds it (tuples as lists)
    if "overrides" in new and isinstance(old.get("overrides"), dict):
        old["overrides"], new["overrides"] = ({k: v for k, v in o.items() if k not in free} for o in (old["overrides"], new["overrides"]))
    changed = [f"{key}: {old.get(key)!r} there, {value!r} now" for key, value in new.items() if old.get(key) != value]
    if changed:
        raise RunMismatchError(f"{run_dir} holds a run of other settings ({'; '.join(changed)}): resume it with the same "
                               "settings, or start afresh (without --resume, or in another --run-dir)")


def check_resumable(run_dir: Path, checkpoint_name: str) -> None:
    """Raise :class:`RunFileError` before a resumed run trains when it would lose what ``run_dir`` holds:
    a finished run (its ``result.json``) whose checkpoint is gone would train again from scratch over its
    results, and a damaged ``wall.json`` would fail the run after its training (``start`` reads the train
    curve too)."""
    if (run_dir / RESULT_FILE).exists() and not (run_dir / checkpoint_name).exists():
        raise RunFileError(f"{run_dir} holds a finished run ({RESULT_FILE}) but no {checkpoint_name} to resume from: "
                           "resuming would train it again from scratch over its results; start afresh (without "
                           "--resume, or in another --run-dir)")
    read_walls(run_dir)


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


@dataclass
class TrainResult:
    """The outcome of a run (``result.json``), as the benchmarks table it. ``total_steps``: env
    steps taken; ``sps``: env steps per second of training (evaluations excluded); ``curve``:
    ``(env_steps, success)`` points on :data:`~trainers.run.CURVE_SPLIT` (validation; the return
    for envs without a success metric); ``train_curve``: the same points on the train split;
    ``steps_to_target``: the first curve step at which the curve reached :data:`TARGET_SUCCESS`;
    ``training_reward``: the ``reward_config`` the training envs used (the final metrics are always
    on the env's own reward); ``wall_train_s``, ``wall_eval_s``: seconds summed over the run's sittings."""

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
    wall_train_s: float = 0.0  # seconds of training (learning-curve points included), summed over the run's sittings
    wall_eval_s: float = 0.0  # seconds of final evaluation, summed over the run's sittings
    curve_split: str = CURVE_SPLIT  # the split ``curve`` read (test for an env without a validation split)


# ------------------------------------------------------------------ algorithm registry
@dataclass(frozen=True)
class Algorithm:
    """An algorithm's entry points, as ``"module:function"`` (imported when used): ``train``
    ``(Run) -> Trained``, ``load_policy`` ``(checkpoint, device) -> TrainedPolicy``.
    ``checkpoint_name``: the file in the run directory; ``warm_start``: an algorithm run first
    (``"bc"``) whose checkpoint this one starts from; ``config``: its config dataclass, so that a
    misspelt ``--set`` fails before anything is written (None: it takes no settings);
    ``shares``: a dataclass whose fields also reach the warm start (so that this algorithm can
    load its weights); ``resume_may_change``: the settings a resumed run may take with other values
    than its ``run.json`` records (any other difference is refused); ``exact_resume``: whether a resumed run
    is bit-identical to an uninterrupted one (SB3's restarts its envs' episodes)."""

    train: str
    load_policy: str
    checkpoint_name: str = "checkpoint.pt"
    warm_start: str | None = None
    config: str | None = None  # "module:Class" of its config dataclass: --set names are checked before the run starts
    shares: str | None = None  # "module:Class" whose fields --set gives the warm start too (the network's size and layout)
    resume_may_change: tuple[str, ...] = ()  # settings a resume may give other values (a budget, an endpoint)
    exact_resume: bool = True

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
                       config=f"trainers.sb3_baselines:{config}", exact_resume=False)
       for name, config in (("sb3-ppo", "PPOConfig"), ("sb3-a2c", "A2CConfig"), ("sb3-dqn", "DQNConfig"),
                            ("sb3-maskable-ppo", "MaskablePPOConfig"))},
    **{name: Algorithm("trainers.reference:train", "trainers.reference:load_policy", "policy.json")
       for name in ("random", "expert")},
    **{name: Algorithm(f"trainers.llm.{module}:train", "trainers.llm.runtime:load_policy", "llm_state.ckpt",
                       config=f"trainers.llm.{module}:Config")
       for name, module in (("llm-grpo", "grpo"), ("llm-sft", "sft"))},
    "apo": Algorithm("trainers.llm.apo:train", "trainers.llm.prompting:load_policy", "apo_state.json",
                     config="trainers.llm.apo:Config",
                     resume_may_change=("rounds", "max_episodes", "base_url", "api_key", "optimizer_base_url",
                                        "optimizer_api_key", "concurrency", "timeout", "max_retries")),
}


def register_algorithm(name: str, algorithm: Algorithm) -> None:
    """Make ``name`` trainable with ``agentgym train --algo name`` (replaces an entry of that name)."""
    ALGORITHMS[name] = algorithm


def algorithm(name: str) -> Algorithm:
    """The registered algorithm ``name``; a dotted module path not registered yet (``mypackage.my_algo``)
    is registered under that path as the algorithm its module defines (:func:`module_algorithm`)."""
    if name not in ALGORITHMS and "." in name:
        register_algorithm(name, module_algorithm(name))
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose from {', '.join(ALGORITHMS)}, or give the dotted path "
                         "of a module that defines train and load_policy")
    return ALGORITHMS[name]


def resumes_exactly(algo: str, run_dir: Path) -> bool:
    """Whether an interrupted run of ``algo`` in ``run_dir`` would continue bit-identically: its algorithm
    resumes exactly, and its torch checkpoint, if it has one, holds the training envs as they were
    (subprocess envs do not pickle and are saved as None: a resume would start new episodes); an
    unreadable checkpoint does not."""
    entry = algorithm(algo)
    checkpoint = Path(run_dir) / entry.checkpoint_name
    if not entry.exact_resume or checkpoint.suffix != ".pt" or not checkpoint.exists():
        return entry.exact_resume
    from . import checkpoints

    try:
        return checkpoints.load(checkpoint).get("envs", b"") is not None
    except CheckpointError:
        return False


def module_algorithm(module: str) -> Algorithm:
    """The algorithm a module defines: its ``train(run)`` and ``load_policy(checkpoint, device)``, its
    ``Config`` dataclass when it has one (checked ``--set`` names), its ``CHECKPOINT_NAME`` (default
    ``checkpoint.pt``), its ``EXACT_RESUME`` (default False: a benchmark starts an interrupted run of it
    afresh). A clear error when the module is missing or lacks either function."""
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        parts = module.split(".")
        if exc.name not in {".".join(parts[:n]) for n in range(1, len(parts) + 1)}:
            raise  # the module exists, one of its own imports does not
        raise ValueError(f"unknown algorithm {module!r}: no module of that name can be imported ({exc})") from exc
    missing = [name for name in ("train", "load_policy") if not callable(getattr(found, name, None))]
    if missing:
        raise ValueError(f"module {module} is no algorithm: it lacks {' and '.join(missing)} (see trainers.lifecycle)")
    return Algorithm(f"{module}:train", f"{module}:load_policy", getattr(found, "CHECKPOINT_NAME", "checkpoint.pt"),
                     config=f"{module}:Config" if isinstance(getattr(found, "Config", None), type) else None,
                     exact_resume=bool(getattr(found, "EXACT_RESUME", False)))


def first_step_at_target(curve: list[tuple[int, float]], target: float = TARGET_SUCCESS) -> int | None:
    """The first env step of ``curve`` (on the run's curve split: validation, or test on a -v0 id) at which success
    reached ``target``."""
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


def load_result(run_dir: str | Path) -> TrainResult:
    """The :class:`TrainResult` a finished run wrote to ``run_dir``."""
    data = read_run_json(Path(run_dir) / RESULT_FILE)
    for name in ("curve", "train_curve"):
        data[name] = [tuple(point) for point in data.get(name, [])]
    return TrainResult(**data)


def load_trained_policy(checkpoint: str | Path, device: str = "auto") -> TrainedPolicy:
    """The policy a checkpoint of ``agentgym train`` holds (a run directory works too), for any
    algorithm: the algorithm named in the run's ``run.json`` loads it."""
    path = Path(checkpoint)
    info = run_info(path)
    entry = recorded_algorithm(info)
    if path.is_dir():
        path = path / entry.checkpoint_name
    elif path.name != entry.checkpoint_name:
        raise CheckpointError(f"{path} is not an agentgym checkpoint; its run's ({info['algo']}) checkpoint is "
                              f"{path.parent / entry.checkpoint_name}")
    return entry_point(entry.load_policy)(path, resolve_device(device))


def recorded_algorithm(info: dict[str, Any]) -> Algorithm:
    """The algorithm of a run's ``run.json``: the registered one of its name, else the entry points the
    run recorded (an algorithm a module registered in the process that trained it)."""
    if info["algo"] in ALGORITHMS or "." in info["algo"] or "load_policy" not in info:
        return algorithm(info["algo"])
    return Algorithm(info["train"], info["load_policy"], info["checkpoint_name"])


# ------------------------------------------------------------------ the lifecycle
def curve_settings(overrides: dict[str, Any]) -> dict[str, Any]:
    """Pop the curve settings (:data:`~trainers.run.CURVE_OVERRIDES`) out of ``overrides``,
    checked: ``curve_every`` and ``curve_episodes`` positive integers, ``early_stop`` a success
    rate in (0, 1]; None where not given."""
    curve = {name: overrides.pop(name, None) for name in CURVE_OVERRIDES}
    for name in ("curve_every", "curve_episodes"):
        value = curve[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"setting {name} takes a positive integer, got {value!r}")
    stop = curve["early_stop"]
    if stop is not None and (isinstance(stop, bool) or not isinstance(stop, int | float) or not 0 < stop <= 1):
        raise ValueError(f"setting early_stop takes a success rate in (0, 1], got {stop!r}")
    return curve


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
    curve = curve_settings(overrides)
    for level in curriculum[:-1]:
        checked_env(level, env_kwargs, None)
    declared = checked_env(env_id, env_kwargs, None)
    training_reward = merged_training_reward(declared, reward_override)
    if training_reward is not None:
        checked_env(env_id, env_kwargs, training_reward)  # a bad reward field fails now
    check_settings(algo, entry.config_class(), overrides)
    curve_split = curve_split_for(env_id, env_kwargs)
    if curve_split != CURVE_SPLIT:
        if curve["early_stop"] is not None:  # a decision made on the test split: refused
            raise ValueError(f"setting early_stop stops training on the {CURVE_SPLIT} curve, and {env_id} has no "
                             f"{CURVE_SPLIT} split (its curve would read {curve_split}): train on its -v1 id, or "
                             f"leave early_stop out")
        print(f"{env_id} has no {CURVE_SPLIT} split: its learning curve reads {curve_split} (for display only)")
    run_dir = run_dir or run_dir_for(request.run_root, env_id, algo, request.seed)
    fresh_dir = fresh_dir or run_dir
    if clear and fresh_dir.exists() and not request.resume:
        shutil.rmtree(fresh_dir)
    record = {"algo": algo, "env_id": env_id, "seed": request.seed, "env_kwargs": env_kwargs,
              "training_reward": training_reward, "overrides": overrides, "curriculum": list(curriculum),
              **{name: value for name, value in curve.items() if value is not None}}
    if request.resume:
        check_same_run(run_dir, record, entry.resume_may_change)
        check_resumable(run_dir, entry.checkpoint_name)
    run_dir.mkdir(parents=True, exist_ok=True)
    run = Run(request, algo, env_id, run_dir, resolve_device(request.device), env_kwargs, training_reward,
              run_dir / entry.checkpoint_name, overrides, init_checkpoint,
              request.total_steps if total_steps is None else total_steps, curriculum, **curve, curve_split=curve_split)
    if request.resume:
        run.train_curve()  # a damaged curve fails now, not after the sitting's training
    write_json_atomic(run_dir / RUN_FILE, {**record, "total_steps": run.total_steps, "train": entry.train,
                                           "load_policy": entry.load_policy, "checkpoint_name": entry.checkpoint_name})
    return run


def train(request: TrainRequest) -> TrainResult:
    """Carry ``request`` from start to its final report (see the module docstring), inside one
    run span while tracing is on."""
    if "progress" in request.overrides:  # --set progress=false: the progress bar, as --no-progress
        if not isinstance(request.overrides["progress"], bool):
            raise ValueError(f"setting progress takes true or false, got {request.overrides['progress']!r}")
        overrides = {k: v for k, v in request.overrides.items() if k != "progress"}
        request = replace(request, progress=request.overrides["progress"], overrides=overrides)
    with tracing.run_span("train", {"agentgym.env.id": request.env, "agentgym.algo": request.algo,
                                    "agentgym.seed": request.seed, "agentgym.total_steps": request.total_steps}) as span:
        return _train(request, span)


def _train(request: TrainRequest, span: Any) -> TrainResult:
    entry = algorithm(request.algo)
    started = time.perf_counter()
    warm, overrides, run, eval_seconds = None, None, None, 0.0
    try:
        if entry.warm_start:
            overrides = {k: v for k, v in request.overrides.items() if not k.startswith(f"{entry.warm_start}_")}
            # a misspelt setting of the second stage fails before the first stage trains
            check_settings(request.algo, entry.config_class(), {k: v for k, v in overrides.items() if k not in LIFECYCLE_OVERRIDES})
            warm = warm_start(request, entry.warm_start)
        budget = max(request.total_steps - warm.total_steps, 0) if warm else None
        run = start(request, overrides=overrides, total_steps=budget, clear=warm is None,
                    init_checkpoint=Path(warm.run_dir) / ALGORITHMS[entry.warm_start].checkpoint_name if warm else None)
        close_killed_sitting(run.run_dir)
        run.on_checkpoint = lambda: mark_sitting(run.run_dir, time.perf_counter() - started)
        print(f"{run.algo} on {run.env_id}, seed {run.seed}, {run.total_steps} env steps, device {run.device}; "
              f"run directory {run.run_dir}")
        with recorded(request, run, span) as recorder:
            trained = entry_point(entry.train)(run)
            evaluating = time.perf_counter()
            result = finish(run, trained, request.eval_episodes, evaluating - started, recorder)
            eval_seconds = time.perf_counter() - evaluating
            if warm is not None:  # one budget, one curve: the warm start's steps and time count
                result.total_steps += warm.total_steps
                result.wall_time_s += warm.wall_time_s
                result.curve = [(step + warm.total_steps, value) for step, value in result.curve]
                result.train_curve = [(step + warm.total_steps, value) for step, value in result.train_curve]
                result.steps_to_target = first_step_at_target(result.curve)
            if recorder is not None:
                recorder.summary = run_figures(result)
    finally:  # a sitting cut short by an error or Ctrl-C counts too
        if run is not None:
            walls = add_sitting(run.run_dir, time.perf_counter() - started - eval_seconds, eval_seconds)
    result.wall_train_s, result.wall_eval_s = walls["train_s"], walls["eval_s"]
    write_json_atomic(run.run_dir / RESULT_FILE, asdict(result))
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
    config = read_run_json(run.run_dir / RUN_FILE)
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
        check_same_run(stage_dir, {"overrides": {k: v for k, v in overrides.items() if k not in LIFECYCLE_OVERRIDES}})
        return load_result(stage_dir)
    stage_request = replace(request, algo=stage, total_steps=min(steps, request.total_steps), overrides=overrides)
    run = start(stage_request, run_dir=stage_dir, fresh_dir=stage_dir.parent)
    trained = entry_point(algorithm(stage).train)(run)
    return finish(run, trained, 0, trained.train_seconds)


def read_walls(run_dir: Path) -> dict[str, Any]:
    """``<run_dir>/wall.json``: the seconds of training and of final evaluation summed over the run's
    closed sittings, their count, and (``open_train_s``) the seconds of the sitting in progress at its
    last checkpoint."""
    path = run_dir / WALL_FILE
    if not path.exists():
        return {"train_s": 0.0, "eval_s": 0.0, "sittings": 0}
    walls = read_run_json(path)
    if not all(isinstance(walls.get(key), (int, float)) for key in ("train_s", "eval_s", "sittings")):
        raise RunFileError(f"{path} lacks its train_s, eval_s and sittings: restore it, or delete it to count the run's "
                           "seconds afresh")
    return walls


def closed_walls(walls: dict[str, Any]) -> dict[str, float]:
    return {"train_s": walls["train_s"], "eval_s": walls["eval_s"], "sittings": walls["sittings"]}


def close_killed_sitting(run_dir: Path) -> None:
    """Count a sitting that was killed outright (SIGKILL, a lost Ray node: no ``finally`` ran) as closed,
    with the seconds it had trained by its last checkpoint, before a resumed run's next sitting starts."""
    walls = read_walls(run_dir)
    if "open_train_s" in walls:
        write_json_atomic(run_dir / WALL_FILE, {**closed_walls(walls), "train_s": walls["train_s"] + walls["open_train_s"],
                                                "sittings": walls["sittings"] + 1})


def mark_sitting(run_dir: Path, train_s: float) -> None:
    """Record the sitting in progress: ``train_s`` seconds so far (written at each checkpoint)."""
    write_json_atomic(run_dir / WALL_FILE, {**closed_walls(read_walls(run_dir)), "open_train_s": train_s})


def add_sitting(run_dir: Path, train_s: float, eval_s: float) -> dict[str, float]:
    """Add one sitting's seconds of training and of final evaluation to the sums kept in
    ``<run_dir>/wall.json`` (a resumed run adds its sittings); the sums, with the sittings' count."""
    walls = closed_walls(read_walls(run_dir))
    walls = {"train_s": walls["train_s"] + train_s, "eval_s": walls["eval_s"] + eval_s, "sittings": walls["sittings"] + 1}
    write_json_atomic(run_dir / WALL_FILE, walls)
    return walls


def episodes_path(run_dir: str | Path, split: str) -> Path:
    """The final evaluation's per-episode outcomes on ``split`` (JSONL, as ``agentgym eval --output`` writes them)."""
    return Path(run_dir) / f"episodes_{split}.jsonl"


def finish(run: Run, trained: Trained, eval_episodes: int, wall_time_s: float,
           recorder: RunRecorder | None = None) -> TrainResult:
    """The final evaluation on train and test (the env's own reward, its episodes written to
    :func:`episodes_path` and recorded by ``recorder``), ``result.json``. The only read of the
    test split: the learning curve is :data:`CURVE_SPLIT`'s, and the final test point is not added to it."""
    metrics = {}
    for split in ("train", "test"):
        output = episodes_path(run.run_dir, split)
        output.unlink(missing_ok=True)  # a resumed run evaluates afresh
        metrics[split] = evaluate_policy(trained.policy, split, eval_episodes, recorder=recorder,
                                         output=str(output)) if eval_episodes else {}
    measure = "success" if "success" in metrics["test"] else "return"
    curve = list(trained.curve)
    for name, value in metrics["test"].items():
        run.writer.add_scalar(f"final/test_{'env_return' if name == 'return' else name}", value, trained.steps)
    run.writer.close()
    result = TrainResult(
        algo=run.algo, env_id=run.env_id, seed=run.seed, total_steps=trained.steps, wall_time_s=wall_time_s,
        sps=trained.steps / trained.train_seconds if trained.train_seconds > 0 else float("nan"),
        train_metrics=metrics["train"], test_metrics=metrics["test"], curve=curve,
        steps_to_target=first_step_at_target(curve) if measure == "success" else None, run_dir=str(run.run_dir),
        training_reward=run.training_reward, train_curve=run.train_curve(),
        curriculum=list(run.curriculum), curve_split=run.curve_split,
    )
    write_json_atomic(run.run_dir / RESULT_FILE, asdict(result))
    return result

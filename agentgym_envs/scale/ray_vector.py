"""A gymnasium ``VectorEnv`` whose sub-environments live in Ray actors.

Sub-environments are split into contiguous blocks, one block per Ray actor (an
:class:`EnvShard`); one vector ``step`` is one remote call per actor, which steps its whole
block, so round trips are amortised over the block. Observations, rewards, terminations,
truncations, infos (with their ``_key`` masks), autoreset modes, ``reset_mask`` and seeding
are those of :class:`gymnasium.vector.SyncVectorEnv`: for the same seeds and actions both
return the same values, whichever the number of actors.

A worker that dies (its process or machine lost) is replaced by a new actor, which re-runs
the episodes its sub-environments had in progress: each sub-environment's random generator
as it was before the episode's reset, the reset's seed and options, and the actions since,
which are kept by the driver. For an environment that is deterministic given those (the
Gymnasium contract), the trajectory goes on exactly as if nothing had happened. Each restart
is logged as a warning on the ``agentgym_envs.scale.ray_vector`` logger.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from agentgym_envs.observe import tracing

from .runtime import init_ray, ray

logger = logging.getLogger(__name__)


@dataclass
class EpisodeJournal:
    """What re-creates a sub-environment's episode in progress on a new worker."""

    rng: np.random.Generator  # the env's generator just before the episode's reset
    seed: int | None
    options: dict[str, Any] | None
    actions: list[Any] = field(default_factory=list)


class EnvShard:
    """A block of sub-environments in one process, stepped as ``SyncVectorEnv`` steps its own.

    Per sub-environment, ``step`` returns ``(obs, reward, terminated, truncated, infos, rng)``:
    ``infos`` the info dicts to merge into the vector info in order (in same-step autoreset, the
    final observation and info, then the reset's info) and ``rng`` the generator before a reset
    this step made, else ``None``. With ``trace`` (:func:`~agentgym_envs.observe.tracing.propagation`
    of the driver) the envs' episode and tool-call spans go to the driver's collector, under the
    span current there when the vector env was made (the run's).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], autoreset_mode: AutoresetMode,
                 trace: dict[str, Any] | None = None) -> None:
        self.trace_parent = tracing.continue_from(trace)
        with tracing.within(self.trace_parent):
            self.envs = [env_fn() for env_fn in env_fns]
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.needs_reset = [False] * len(self.envs)  # the episode ended at the last step

    def spaces(self) -> tuple[dict[str, Any], str | None, list[gym.Space], list[gym.Space]]:
        """The first env's metadata and render mode, and every env's observation and action space."""
        first = self.envs[0]
        return (dict(first.metadata), first.render_mode, [env.observation_space for env in self.envs],
                [env.action_space for env in self.envs])

    def _reset(self, index: int, seed: int | None, options: dict[str, Any] | None) -> tuple[Any, dict, np.random.Generator]:
        env = self.envs[index]
        rng = copy.deepcopy(env.np_random)
        observation, info = env.reset(seed=seed, options=options)
        self.needs_reset[index] = False
        return observation, info, rng

    def reset(self, requests: Sequence[tuple[int, int | None]], options: dict[str, Any] | None) -> list[tuple]:
        """Reset the envs ``(index, seed)`` in ``requests`` with ``options``."""
        with tracing.within(self.trace_parent):
            return [self._reset(index, seed, options) for index, seed in requests]

    def step(self, actions: Sequence[Any]) -> list[tuple]:
        with tracing.within(self.trace_parent):
            return self._step(actions)

    def _step(self, actions: Sequence[Any]) -> list[tuple]:
        results = []
        for index, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            if self.autoreset_mode == AutoresetMode.NEXT_STEP and self.needs_reset[index]:
                observation, info, rng = self._reset(index, None, None)
                results.append((observation, 0.0, False, False, [info], rng))
                continue
            if self.autoreset_mode == AutoresetMode.DISABLED and self.needs_reset[index]:
                raise RuntimeError(f"sub-environment {index} of this worker ended its episode: with autoreset "
                                   "disabled, reset it (options={'reset_mask': ...}) before stepping it")
            observation, reward, terminated, truncated, info = env.step(action)
            self.needs_reset[index] = bool(terminated or truncated)
            infos, rng = [info], None
            if self.autoreset_mode == AutoresetMode.SAME_STEP and self.needs_reset[index]:
                final = {"final_obs": observation, "final_info": info}
                observation, info, rng = self._reset(index, None, None)
                infos = [final, info]
            results.append((observation, reward, terminated, truncated, infos, rng))
        return results

    def restore(self, journals: Sequence[EpisodeJournal | None]) -> None:
        """Re-run each env's episode in progress from its journal (``None``: never reset)."""
        with tracing.within(self.trace_parent):
            self._replay(journals)

    def _replay(self, journals: Sequence[EpisodeJournal | None]) -> None:
        for index, journal in enumerate(journals):
            if journal is None:
                continue
            env = self.envs[index]
            env.np_random = copy.deepcopy(journal.rng)
            env.reset(seed=journal.seed, options=journal.options)
            ended = False
            for action in journal.actions:
                _, _, terminated, truncated, _ = env.step(action)
                ended = bool(terminated or truncated)
            self.needs_reset[index] = ended

    def call(self, name: str, args: tuple, kwargs: dict[str, Any]) -> list[Any]:
        """``SyncVectorEnv.call`` on this block: call the attribute if callable, else return it."""
        results = []
        for env in self.envs:
            attribute = env.get_wrapper_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return results

    def close(self) -> None:
        with tracing.within(self.trace_parent):
            for env in self.envs:
                env.close()
        if self.trace_parent is not None:
            tracing.shutdown()


class RayVectorEnv(VectorEnv):
    """``len(env_fns)`` sub-environments in ``num_workers`` Ray actors (default: one per CPU
    of the Ray cluster, at most one per env), with ``SyncVectorEnv``'s semantics.

    Without a Ray connection (:func:`agentgym_envs.scale.init_ray`), a local Ray is started.
    ``worker_options`` are Ray actor options (default ``num_cpus=1``: one CPU reserved per
    worker; use a fraction to put more workers than CPUs on a machine). ``max_restarts``: how
    many dead workers are replaced in this env's lifetime before it gives up.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        num_workers: int | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        copy: bool = True,
        worker_options: dict[str, Any] | None = None,
        max_restarts: int = 3,
    ) -> None:
        super().__init__()
        self.env_fns = list(env_fns)
        self.num_envs = len(self.env_fns)
        if self.num_envs == 0:
            raise ValueError("RayVectorEnv needs at least one env_fn")
        init_ray()
        if num_workers is None:
            num_workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        if num_workers < 1:
            raise ValueError(f"num_workers must be at least 1, got {num_workers}")
        self.num_workers = min(num_workers, self.num_envs)
        self.blocks = [block.tolist() for block in np.array_split(np.arange(self.num_envs), self.num_workers)]
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.copy = copy
        self.worker_options = {"num_cpus": 1, **(worker_options or {})}
        self.max_restarts = max_restarts
        self.restarts = 0
        self._actor_class = ray.remote(EnvShard)
        self._trace = tracing.propagation()
        self._workers = [self._spawn(w) for w in range(self.num_workers)]
        self._journals: list[EpisodeJournal | None] = [None] * self.num_envs
        self._set_spaces(self._call_workers("spaces", {w: () for w in range(self.num_workers)}))
        self._env_obs: list[Any] = [None] * self.num_envs
        self._observations = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        self._rewards = np.zeros((self.num_envs,), dtype=np.float64)
        self._terminations = np.zeros((self.num_envs,), dtype=np.bool_)
        self._truncations = np.zeros((self.num_envs,), dtype=np.bool_)

    def _set_spaces(self, described: dict[int, tuple]) -> None:
        metadata, self.render_mode, _, _ = described[0]
        observation_spaces = [space for w in range(self.num_workers) for space in described[w][2]]
        action_spaces = [space for w in range(self.num_workers) for space in described[w][3]]
        self.metadata = {**metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space, self.single_action_space = observation_spaces[0], action_spaces[0]
        if any(space != self.single_observation_space for space in observation_spaces):
            raise RuntimeError("the sub-environments' observation spaces differ; RayVectorEnv needs them equal")
        if any(space != self.single_action_space for space in action_spaces):
            raise RuntimeError("the sub-environments' action spaces differ; RayVectorEnv needs them equal")
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    def _spawn(self, worker: int):
        env_fns = [self.env_fns[i] for i in self.blocks[worker]]
        return self._actor_class.options(**self.worker_options).remote(env_fns, self.autoreset_mode, self._trace)

    def _call_workers(self, method: str, args_by_worker: dict[int, tuple]) -> dict[int, Any]:
        """Call ``method`` on the given workers at once and wait for all; a worker that died
        is restarted with its episodes re-run, and the call is made again."""
        pending = {w: getattr(self._workers[w], method).remote(*args) for w, args in args_by_worker.items()}
        results = {}
        for w, ref in pending.items():
            while w not in results:
                try:
                    results[w] = ray.get(ref)
                except ray.exceptions.RayActorError as error:
                    self._restart(w, error)
                    ref = getattr(self._workers[w], method).remote(*args_by_worker[w])
        return results

    def _restart(self, worker: int, error: Exception) -> None:
        """Replace a dead worker by a new actor that re-runs its episodes in progress."""
        journals = [self._journals[i] for i in self.blocks[worker]]
        while True:
            if self.restarts >= self.max_restarts:
                raise RuntimeError(f"Ray env worker {worker} died and the {self.max_restarts} restarts allowed "
                                   f"(max_restarts) are spent: {error}") from error
            self.restarts += 1
            ray.kill(self._workers[worker])
            self._workers[worker] = self._spawn(worker)
            try:
                ray.get(self._workers[worker].restore.remote(journals))
                break
            except ray.exceptions.RayActorError as again:
                error = again
        running = [journal for journal in journals if journal is not None]
        block = self.blocks[worker]
        logger.warning("Ray env worker %d (sub-environments %d-%d) died (%s); restarted it (restart %d of %d) and "
                       "re-ran its %d episodes in progress (%d steps)", worker, block[0], block[-1],
                       type(error).__name__, self.restarts, self.max_restarts, len(running),
                       sum(len(journal.actions) for journal in running))

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None):
        """Reset every sub-environment, or those of ``options["reset_mask"]``; seeds as in
        ``SyncVectorEnv``: ``None``, an int ``s`` (env ``i`` gets ``s + i``) or one per env."""
        if seed is None:
            seed = [None] * self.num_envs
        elif isinstance(seed, int):
            seed = [seed + i for i in range(self.num_envs)]
        if len(seed) != self.num_envs:
            raise ValueError(f"If seeds are passed as a list the length must match num_envs={self.num_envs} "
                             f"but got length={len(seed)}.")
        options = dict(options) if options is not None else None
        mask = self._reset_mask(options.pop("reset_mask")) if options and "reset_mask" in options else np.ones(self.num_envs, bool)
        requests = {w: [(k, seed[i]) for k, i in enumerate(block) if mask[i]] for w, block in enumerate(self.blocks)}
        results = self._call_workers("reset", {w: (r, options) for w, r in requests.items() if r})
        infos: dict[str, Any] = {}
        for w, worker_results in results.items():
            for (k, env_seed), (observation, info, rng) in zip(requests[w], worker_results):
                i = self.blocks[w][k]
                self._env_obs[i] = observation
                self._journals[i] = EpisodeJournal(rng, env_seed, copy.deepcopy(options))
                infos = self._add_info(infos, info, i)
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        return (copy.deepcopy(self._observations) if self.copy else self._observations), infos

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not mask.any():
            raise ValueError(f"`options['reset_mask']` must contain a boolean array with at least one True value, got reset_mask={mask}")
        return mask

    def step(self, actions: Any):
        """Step every sub-environment: one remote call per worker, all workers at once."""
        actions = [copy.deepcopy(action) for action in iterate(self.action_space, actions)]
        results = self._call_workers("step", {w: ([actions[i] for i in block],) for w, block in enumerate(self.blocks)})
        infos: dict[str, Any] = {}
        for w, block in enumerate(self.blocks):
            for i, (observation, reward, terminated, truncated, env_infos, rng) in zip(block, results[w]):
                self._env_obs[i] = observation
                self._rewards[i], self._terminations[i], self._truncations[i] = reward, terminated, truncated
                for info in env_infos:
                    infos = self._add_info(infos, info, i)
                if rng is not None:
                    self._journals[i] = EpisodeJournal(rng, None, None)
                else:
                    self._journals[i].actions.append(actions[i])
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        return ((copy.deepcopy(self._observations) if self.copy else self._observations), np.copy(self._rewards),
                np.copy(self._terminations), np.copy(self._truncations), infos)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each sub-environment's ``name`` called with the arguments (or its value if not callable)."""
        results = self._call_workers("call", {w: (name, args, kwargs) for w in range(self.num_workers)})
        return tuple(value for w in range(self.num_workers) for value in results[w])

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-environments and end the actors (gone already if Ray was shut down)."""
        if not ray.is_initialized():
            return
        for worker in self._workers:
            try:
                ray.get(worker.close.remote())
            except ray.exceptions.RayActorError:
                pass  # already gone: nothing to close
            ray.kill(worker)

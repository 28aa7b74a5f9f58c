"""Check that the flat joint mask admits only valid calls, over states reached by masked-random play.

For each env family, play uniformly random masked actions through ``FlatDiscreteAction``
(``layout="admissible"``, ``mask_repeats=True``) and, in every state reached, decode every
masked-in action and ask the episode whether the call is valid (the check ``Episode.run``
makes), then step the sampled one and read ``info["valid"]``. Also reports how many of the
scripted expert's calls the layout can express (its numbered calls are capped per tool).

With ``--expert-episodes N``: per level of every version of every family, on test tasks 0..N-1,
how many episodes the scripted expert solves playing only the flat actions at the trainers'
capacity (each scenario's ``flat_capacity``): a trained policy's ceiling on that level. Written
to ``results/admissible_actions.md``.

Usage: python benchmarks/admissible_actions.py [--states 1000] [--seed 0] [--tau2-data-dir DIR]
       python benchmarks/admissible_actions.py --expert-episodes 100 [--only tau2_retail Math-v0 ...]
(``--only``: measure only the levels of these families' latest versions or of these ids' ladders,
and keep the page's other rows)
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import agentgym_envs  # noqa: F401  (registers the ids)
from agentgym_envs.core import Episode
from agentgym_envs.levels import FAMILIES, family
from agentgym_envs.wrappers import FlatDiscreteAction
from trainers.run import features_kwargs
from trainers.torch_policy import FEATURES_MASK_REPEATS

TAU2_DATA_DIR = os.environ.get("TAU2_DATA_DIR", "/work/shared/tau2")


def env_makers(tau2_data_dir: str = TAU2_DATA_DIR) -> dict[str, Callable[..., gym.Env]]:
    """One structured env per family (and airline's ``-v1``, whose flat layout takes in rows as the
    episode names them), taking ``gym.make`` keyword arguments."""
    tau2 = {"data_dir": tau2_data_dir}
    return {
        "customer_support": lambda **kw: gym.make("AgentGym/CustomerSupport-v0", **kw),
        "math": lambda **kw: gym.make("AgentGym/Math-v0", **kw),
        "coding": lambda **kw: gym.make("AgentGym/Coding-v0", **kw),
        "tau2_retail": lambda **kw: gym.make("AgentGym/Tau2Retail-v0", **tau2, **kw),
        "tau2_airline": lambda **kw: gym.make("AgentGym/Tau2Airline-v0", **tau2, **kw),
        "tau2_airline_v1": lambda **kw: gym.make("AgentGym/Tau2Airline-v1", **tau2, **kw),
        "tau2_telecom": lambda **kw: gym.make("AgentGym/Tau2Telecom-v0", **kw),
        "support_team": lambda **kw: gym.make("AgentGym/SupportTeam-v0", **{k: v for k, v in kw.items() if k != "mask_repeats"}),
    }


def allowed_tools(base: Any) -> frozenset[str] | None:
    """The tools the acting agent holds (the team adapter), None for a single agent."""
    team = getattr(base, "base", None)
    return None if team is None else frozenset(team.scenario.holdings[team.holder])


def expert_rows(episode: Episode) -> tuple[int, tuple[int, ...]] | None:
    """The expert's next call as (tool, rows), or None when the table cannot express it."""
    try:
        call = episode.scenario.expert_call(episode.task, episode.world, episode.history)
    except StopIteration:
        return None
    action = episode.encode(call)
    if action is None:
        return None
    tool = int(action[0])
    return tool, tuple(int(r) for r in action[1 : 1 + len(episode.tools[tool].args)])


def check_masked_play(make: Callable[..., gym.Env], states: int, seed: int = 0, capacity: int = 128) -> dict[str, int]:
    """Counts over ``states`` states of masked-random play: admitted actions, those that are
    not valid calls (judged in place and, for the sampled one, by stepping), and the expert's
    next calls the layout expresses."""
    env = FlatDiscreteAction(make(mask_repeats=True), layout="admissible", capacity=capacity)
    rng = np.random.default_rng(seed)
    counts = dict(states=0, admitted=0, invalid=0, stepped_invalid=0, expert_calls=0, expert_expressed=0)
    episode_seed = seed
    env.reset(seed=episode_seed)
    while counts["states"] < states:
        base = env.unwrapped
        episode, allowed = base.episode, allowed_tools(base)
        masks = env.action_masks()
        admitted = np.flatnonzero(masks)
        counts["states"] += 1
        counts["admitted"] += len(admitted)
        for index in admitted:
            call, problem = episode.decode(env.action(index))
            counts["invalid"] += call is None or episode.problem(call, allowed) is not None
        expert = expert_rows(episode)
        if expert is not None:
            counts["expert_calls"] += 1
            counts["expert_expressed"] += env.call_table().numbers[expert[0]].get(expert[1]) is not None
        if not len(admitted):
            episode_seed += 1
            env.reset(seed=episode_seed)
            continue
        _, _, terminated, truncated, info = env.step(int(rng.choice(admitted)))
        counts["stepped_invalid"] += not info["valid"]
        if terminated or truncated:
            episode_seed += 1
            env.reset(seed=episode_seed)
    env.close()
    return counts


def level_maker(env_id: str, tau2_data_dir: str) -> Callable[..., gym.Env]:
    """``env_id`` as the trainers' features policies make it (``features_kwargs``: the features
    observation, repeated calls masked), taking more ``gym.make`` keyword arguments."""
    local_data = env_id.startswith(("AgentGym/Tau2Retail", "AgentGym/Tau2Airline"))  # telecom's data: the tau2 package
    kwargs: dict[str, Any] = {"data_dir": tau2_data_dir} if local_data else {}
    kwargs |= features_kwargs(env_id, kwargs, FEATURES_MASK_REPEATS)
    return lambda **kw: gym.make(env_id, **kwargs, **kw)


def expert_episodes(make: Callable[..., gym.Env], episodes: int, capacity: int | None = None) -> tuple[int, int]:
    """(test episodes the expert solves playing only flat actions, ``episodes``) at ``capacity``
    (None: the scenario's); an episode ends unsolved where its next call has no action."""
    env = FlatDiscreteAction(make(split="test"), layout="admissible", capacity=capacity)
    solved = 0
    for seed in range(episodes):
        env.reset(seed=seed)
        while True:
            env.action_masks()  # numbers the calls admissible now
            expert = expert_rows(env.unwrapped.episode)
            action = None if expert is None else env.index((expert[0], *expert[1]))
            if action is None:
                break
            _, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                solved += bool(info["metrics"]["success"])
                break
    env.close()
    return solved, episodes


def expert_page(episodes: int, tau2_data_dir: str, only: list[str] | None = None,
                kept: dict[str, str] | None = None) -> str:
    """The markdown page of :func:`expert_episodes` on every level of every family's every version
    (only of the ladders ``only`` names, when given: the other rows are taken from ``kept``, by id)."""
    measured = None if only is None else {env_id for name in only for env_id in family(name).ids()}
    lines = ["# The expert through the trainers' flat actions", "",
             f"Command: `python benchmarks/admissible_actions.py --expert-episodes {episodes}` (some ladders' rows: "
             "`--only NAME ...`)", "",
             "Per level, the test episodes (tasks 0 to "
             f"{episodes - 1}) that the scripted expert solves when it may play only the flat admissible "
             "actions that SB3's MaskablePPO and our PPO choose from (`FlatDiscreteAction`, layout "
             "`admissible`, at each scenario's `flat_capacity`; repeated calls masked). A call numbered "
             "past a tool's capacity has no action, so the episode stops there: no trained policy on those "
             "actions can pass this figure.", "",
             "| level | capacity | solved |", "|---|---|---|"]
    for env_id in (env_id for fam in FAMILIES for env_id in fam.ids()):
        short = env_id.split("/")[-1]
        if measured is not None and env_id not in measured:
            lines += [kept[short]] if short in (kept or {}) else []
            continue
        make = level_maker(env_id, tau2_data_dir)
        solved, played = expert_episodes(make, episodes)
        capacity = FlatDiscreteAction(make(), layout="admissible").capacity
        lines.append(f"| {short} | {capacity} | {solved} of {played} |")
    return "\n".join(lines) + "\n"


def page_rows(path: Path) -> dict[str, str]:
    """The table rows of a page written by :func:`expert_page`, by level id ({} without one)."""
    if not path.is_file():
        return {}
    rows = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("| ") and "-v" in line]
    return {row.split("|")[1].strip(): row for row in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--capacity", type=int, default=128)
    parser.add_argument("--tau2-data-dir", default=TAU2_DATA_DIR)
    parser.add_argument("--expert-episodes", type=int, help="write the expert's ceiling per level instead")
    parser.add_argument("--only", nargs="+", help="with --expert-episodes: only these ladders (family names or ids)")
    args = parser.parse_args()
    if args.expert_episodes:
        path = Path(__file__).parent / "results" / "admissible_actions.md"
        page = expert_page(args.expert_episodes, args.tau2_data_dir, args.only, page_rows(path))
        path.write_text(page, encoding="utf-8")
        print(page)
        return
    for name, make in env_makers(args.tau2_data_dir).items():
        counts = check_masked_play(make, args.states, args.seed, args.capacity)
        print(json.dumps({"family": name, **counts}), flush=True)


if __name__ == "__main__":
    main()

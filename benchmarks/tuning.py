"""Equal tuning: every trained algorithm gets the same Optuna search, run on Ray Tune, scored on validation.

    python benchmarks/tuning.py --algos ppo sb3-maskable-ppo          # 16 trials each, local Ray, resumable
    python benchmarks/tuning.py --algos ppo --address auto            # the trials of a Ray cluster

Each trial trains one seed on every level of the tuning set (:data:`TUNING_LEVELS`: mid-ladder levels of
different families, as Atari work tunes on a few games) for the same env-step budget, then scores the greedy
policy on each level's VALIDATION split; the trial's score is the mean. Optuna's TPE sampler (through Ray Tune's
``OptunaSearch``, seeded) proposes each algorithm's standard hyper-parameters (:data:`SEARCH_SPACES`, in the
spirit of rl-zoo3's samplers), the same number of trials for every algorithm. The test split is never read.

The best trial's settings are frozen in ``benchmarks/tuned/<algo>.json`` (with its score, the trial count, the
tuning set and budget, and the commits), which the suite's tuned rows train with on every level.
``<algo>_trials.csv`` beside it is the search's journal: each trial writes its row (settings, scores, Ray's trial
id, the commit it ran at, its CPU seconds summed over its levels: a level's last sitting's where Ray restored it
mid-way) there as it finishes, and ``<algo>_levels.csv`` each level's score as a trial scores it, so a search
outlives the machine it ran on, losing only the levels in training, once both files are kept. A search resumes
from Ray Tune's folder under ``--storage`` (default ``runs/tuning``, not committed) where it is still there, its
unfinished trials included; else from the journals: the trials cut short run first with their settings, training
only the levels they had not scored, then Optuna is told the recorded trials' scores and proposes only the trials
still missing. A
finished search is not run again, and one resumed with other trials, levels, steps, episodes, search space or fixed
settings is refused (``<algo>.search.json`` records what it is, beside the journal and in Ray's folder).

A user's algorithm (a module path, or a name that a module given to ``--import`` registers) is searched
over the space its module declares (``search_space()``); ``python -m benchmarks.your_algorithm`` runs
this search, then the suite's protocol, for it.
"""

from __future__ import annotations

import argparse
import csv
import fcntl
import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# This script runs as ``python benchmarks/tuning.py`` (the repository root need not be on the path), so it imports
# nothing from the benchmarks package: the suite imports these from here.
ROOT = Path(__file__).resolve().parents[1]
TUNED = ROOT / "benchmarks" / "tuned"  # the frozen settings, <algorithm>.json, that the suite's tuned rows train with
METRIC = "validation_success"
TUNING_LEVELS = ("AgentGym/CustomerSupport-L2-v1", "AgentGym/Math-L1-v1", "AgentGym/Tau2Retail-L1-v1")
TRIALS = 16
STEPS = 50_000
EPISODES = 50
SEARCH_SEED = 0

# What every trial of an algorithm shares (not searched): the observation SB3's stock policies read.
FIXED: dict[str, dict[str, Any]] = {
    "ppo": {"observation": "features"},
    "bc-ppo": {"observation": "features"},
    "bc": {"observation": "features"},
}


def search_spaces() -> dict[str, dict[str, Any]]:
    """Each trained algorithm's standard hyper-parameters, as Ray Tune distributions (``--set`` names)."""
    from ray import tune

    learning_rate, ent_coef = tune.loguniform(1e-4, 1e-2), tune.loguniform(1e-4, 1e-1)
    gamma, gae_lambda = tune.choice([0.95, 0.99, 0.995]), tune.choice([0.9, 0.95, 0.98, 1.0])
    ours = {"learning_rate": learning_rate, "ent_coef": ent_coef, "num_steps": tune.choice([32, 64, 128, 256]),
            "update_epochs": tune.choice([2, 4, 8]), "num_minibatches": tune.choice([2, 4, 8]), "gamma": gamma,
            "gae_lambda": gae_lambda, "clip_coef": tune.choice([0.1, 0.2, 0.3])}
    sb3_ppo = {"learning_rate": learning_rate, "ent_coef": ent_coef, "n_steps": tune.choice([32, 64, 128, 256]),
               "batch_size": tune.choice([64, 128, 256]), "n_epochs": tune.choice([2, 4, 8]), "gamma": gamma,
               "gae_lambda": gae_lambda, "clip_range": tune.choice([0.1, 0.2, 0.3])}
    return {
        "ppo": ours,
        "bc-ppo": {**ours, "bc_epochs": tune.choice([20, 50, 100])},
        "bc": {"learning_rate": learning_rate, "epochs": tune.choice([20, 50, 100]),
               "batch_size": tune.choice([64, 128, 256])},
        "sb3-ppo": sb3_ppo,
        "sb3-maskable-ppo": sb3_ppo,
        "sb3-a2c": {"learning_rate": learning_rate, "ent_coef": ent_coef, "n_steps": tune.choice([5, 8, 16, 32]),
                    "gamma": gamma, "gae_lambda": gae_lambda, "max_grad_norm": tune.choice([0.5, 1.0, 5.0])},
        "sb3-dqn": {"learning_rate": learning_rate, "buffer_size": tune.choice([10_000, 20_000, 50_000]),
                    "learning_starts": tune.choice([1_000, 2_000, 5_000]),
                    "target_update_interval": tune.choice([500, 1_000, 2_000, 5_000]),
                    "exploration_fraction": tune.choice([0.1, 0.3, 0.5]), "train_freq": tune.choice([1, 4, 8]),
                    "gamma": gamma},
    }


def search_space(algo: str) -> dict[str, Any]:
    """``algo``'s search space: a trained built-in's (:func:`search_spaces`), else the one its own module
    declares, ``search_space()`` beside its ``train`` (a user's algorithm: a module path or a registered name)."""
    from trainers.lifecycle import algorithm
    from trainers.run import entry_point

    built_in = search_spaces()
    if algo in built_in:
        return built_in[algo]
    train = entry_point(algorithm(algo).train)
    declared = getattr(sys.modules[train.__module__], "search_space", None)
    if not callable(declared):
        raise ValueError(f"{algo} has no search space: its module {train.__module__} declares no search_space() "
                         f"(the built-in spaces: {sorted(built_in)})")
    return dict(declared())


def import_modules(modules: Sequence[str]) -> None:
    """Import ``modules`` (ones that register algorithms with ``register_algorithm``), in this process."""
    for module in modules:
        importlib.import_module(module)


def level_score(algo: str, settings: dict[str, Any], env_id: str, steps: int, episodes: int, run_root: Path,
                seed: int = 0) -> float:
    """Train ``algo`` with ``settings`` on ``env_id`` (one seed, no final evaluation; a run ``run_root`` holds
    resumes), then the greedy policy's success on ``episodes`` episodes of its validation split."""
    from trainers.lifecycle import ALGORITHMS, load_trained_policy, train
    from trainers.run import TrainRequest, evaluate_policy

    request = TrainRequest(env_id, algo, seed, steps, run_root=str(run_root), eval_episodes=0, resume=True,
                           progress=False, record=False, overrides={**FIXED.get(algo, {}), **settings})
    result = train(request)
    policy = load_trained_policy(Path(result.run_dir) / ALGORITHMS[algo].checkpoint_name)
    return float(evaluate_policy(policy, "validation", episodes)["success"])


def trial_function(algo: str, levels: Sequence[str], steps: int, episodes: int, storage: Path, journal: Path,
                   imports: Sequence[str] = ()) -> Callable[[dict], dict]:
    """The Ray Tune trainable of ``algo``'s search: a trial's settings -> its validation score on each level and
    ``METRIC``, their mean. Each level's score is written to the level journal in the ``journal`` folder as it
    is known, and the trial's row to the search's journal there when all are (``imports``: modules the trial's
    process imports first, where ``algo`` is registered). A level that the level journal already scores for
    the same settings (a trial of an earlier sitting, cut short) is not trained again."""
    def trial(settings: dict[str, Any]) -> dict[str, float]:
        from ray import tune

        import_modules(imports)
        trial_id = tune.get_context().get_trial_id()
        run_root = storage / f"{algo}_runs" / trial_id  # a restored trial resumes its runs
        known = {row["level"]: row for row in read_rows(levels_path(journal, algo)) if searched(row) == settings}
        scores, cpu_s = {}, 0.0
        for env_id in levels:
            if env_id not in known:
                started = time.process_time()  # the level's own CPU seconds: neither the machine's load nor a pause counts
                score = level_score(algo, settings, env_id, steps, episodes, run_root)
                known[env_id] = {"trial_id": trial_id, "commit": commit(), "level": env_id, "score": score,
                                 "cpu_s": round(time.process_time() - started, 1), **settings_columns(settings)}
                record_row(levels_path(journal, algo), known[env_id], key=("trial_id", "level"))
            scores[env_id] = known[env_id]["score"]
            cpu_s += known[env_id]["cpu_s"] or 0.0
        scores[METRIC] = sum(scores[env_id] for env_id in levels) / len(levels)
        record_trial(journal, algo, {"trial_id": trial_id, "commit": commit(), "cpu_s": round(cpu_s, 1),
                                     **settings_columns(settings), **scores})
        return scores
    return trial


def settings_columns(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` as a journal row's ``settings/`` columns (:func:`searched` reads them back)."""
    return {f"settings/{key}": value for key, value in settings.items()}


def trials_path(folder: Path, algo: str) -> Path:
    """``algo``'s journal in ``folder``: one row per finished trial, in the order they finished."""
    return folder / f"{algo}_trials.csv"


def levels_path(folder: Path, algo: str) -> Path:
    """``algo``'s level journal in ``folder``: one row per level a trial has scored (its trial id, commit, level,
    score, CPU seconds and settings), so that a trial cut short with the machine that ran it keeps its levels."""
    return folder / f"{algo}_levels.csv"


def read_trials(folder: Path, algo: str) -> list[dict[str, Any]]:
    """The rows of ``algo``'s journal (see :func:`read_rows`)."""
    return read_rows(trials_path(folder, algo))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a journal file (none where it has no file), each value as the search gave it: settings as
    JSON values where they parse (numbers), else strings; scores and seconds as floats; trial id, commit and
    level as strings; None in a column a row was written without (``cpu_s`` before it was recorded)."""
    if not path.exists():
        return []
    with open(path, newline="") as handle:
        return [{key: parsed_cell(key, text) for key, text in row.items()} for row in csv.DictReader(handle)]


def parsed_cell(column: str, text: str) -> Any:
    """One journal cell back as its value (see :func:`read_rows`)."""
    if text in ("", None):
        return None
    if column in ("trial_id", "commit", "level"):
        return text
    if not column.startswith("settings/"):
        return float(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def record_trial(folder: Path, algo: str, row: dict[str, Any]) -> None:
    """Add ``row`` to ``algo``'s journal, unless a row of its trial id is there (a restored trial that ran again)."""
    record_row(trials_path(folder, algo), row, key=("trial_id",))


def record_row(path: Path, row: dict[str, Any], key: Sequence[str]) -> None:
    """Add ``row`` to the journal file ``path``, unless a row with the same ``key`` columns is there. Trials
    finish in several processes: the folder is locked while the file is rewritten, and it is replaced whole
    (written to a temporary file first; columns: every key of any row, sorted), so a reader never sees half a row."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        rows = read_rows(path)
        if any(all(recorded.get(column) == row[column] for column in key) for recorded in rows):
            return
        partial = path.with_suffix(".csv.partial")
        with open(partial, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=sorted({column for each in [*rows, row] for column in each}))
            writer.writeheader()
            writer.writerows([*rows, row])
        os.replace(partial, path)
    finally:
        os.close(lock)  # releases the lock


def unfinished_settings(folder: Path, algo: str) -> list[dict[str, Any]]:
    """The settings of trials that scored some levels in ``folder``'s level journal but have no row in the
    search's journal (cut short with the machine that ran them), in the order they first scored a level."""
    finished = [searched(row) for row in read_trials(folder, algo)]
    unfinished: list[dict[str, Any]] = []
    for row in read_rows(levels_path(folder, algo)):
        settings = searched(row)
        if settings not in finished and settings not in unfinished:
            unfinished.append(settings)
    return unfinished


def tune_algorithm(algo: str, trials: int, levels: Sequence[str], steps: int, episodes: int, storage: Path,
                   concurrent: int, out: Path, imports: Sequence[str] = ()) -> dict[str, Any]:
    """Run (or resume) ``algo``'s search, its journal in ``out``: the frozen record of its best trial (the one
    ``out`` holds already where the search was finished before)."""
    from ray import tune
    from ray.tune.search import BasicVariantGenerator
    from ray.tune.search.optuna import OptunaSearch

    storage = storage.resolve()
    definition = {"trials": trials, "levels": list(levels), "env_steps": steps, "episodes": episodes,
                  "search_seed": SEARCH_SEED, "search_space": described(search_space(algo)), "fixed": FIXED.get(algo, {})}
    frozen = out / f"{algo}.json"
    if frozen.exists():  # finished: nothing runs again, and the record keeps the commit that froze it
        record = json.loads(frozen.read_text())
        changed = sorted(key for key in ("trials", "levels", "env_steps", "episodes", "search_seed")
                         if record.get(key) != definition[key])
        if changed:
            raise SystemExit(f"{algo}: {frozen} was frozen by a search with other {', '.join(changed)}; "
                             f"delete it and {trials_path(out, algo)} to tune afresh")
        return record
    for folder in (out, storage):
        check_same_search(folder, algo, definition)
    recorded = read_trials(out, algo)
    if len(recorded) < trials:
        trainable = tune.with_resources(trial_function(algo, levels, steps, episodes, storage, out, imports), {"cpu": 1})
        if tune.Tuner.can_restore(str(storage / algo)):  # Ray's folder, unfinished trials included
            tune.Tuner.restore(str(storage / algo), trainable, resume_errored=True).fit()
        else:  # from the journals: the trials cut short first (their scored levels are not trained again)
            unfinished = unfinished_settings(out, algo)[:trials - len(recorded)]
            if unfinished:
                tune.Tuner(trainable, param_space=search_space(algo),
                           tune_config=tune.TuneConfig(search_alg=BasicVariantGenerator(points_to_evaluate=unfinished),
                                                       num_samples=len(unfinished), max_concurrent_trials=concurrent),
                           run_config=tune.RunConfig(name=f"{algo}-unfinished", storage_path=str(storage))).fit()
                recorded = read_trials(out, algo)
            if len(recorded) < trials:  # then Optuna, told every finished trial: only the missing ones run
                searcher = OptunaSearch(metric=METRIC, mode="max", seed=sitting_seed(len(recorded)),
                                        points_to_evaluate=[searched(row) for row in recorded] or None,
                                        evaluated_rewards=[row[METRIC] for row in recorded] or None)
                tune.Tuner(trainable, param_space=search_space(algo),
                           tune_config=tune.TuneConfig(search_alg=searcher, num_samples=trials - len(recorded),
                                                       max_concurrent_trials=concurrent),
                           run_config=tune.RunConfig(name=algo, storage_path=str(storage))).fit()
    rows = read_trials(out, algo)[:trials]
    if len(rows) < trials:
        raise RuntimeError(f"{algo}: {len(rows)} of {trials} trials finished; run the command again to resume")
    best = max(rows, key=lambda row: row[METRIC])  # ties: the trial that finished first
    return {"algorithm": algo, "settings": {**FIXED.get(algo, {}), **searched(best)}, METRIC: best[METRIC],
            "per_level": {env_id: best[env_id] for env_id in levels}, "trials": len(rows), "levels": list(levels),
            "env_steps": steps, "episodes": episodes, "searcher": "optuna-tpe", "search_seed": SEARCH_SEED,
            "commit": commit(), "trial_commits": sorted({row["commit"] for row in rows if row.get("commit")})}


def sitting_seed(recorded: int) -> int:
    """The sampler's seed for a search with ``recorded`` trials in its journal: the search seed plus that
    number. TPE draws its first trials at random from its own seeded stream, whatever it is told, so a
    sitting seeded as the first one would propose the first sitting's settings again."""
    return SEARCH_SEED + recorded


def searched(row: dict[str, Any]) -> dict[str, Any]:
    """The searched settings of a journal row (its ``settings/`` columns, by their names)."""
    return {key.removeprefix("settings/"): value for key, value in row.items() if key.startswith("settings/")}


def described(value: Any) -> Any:
    """``value`` (a search space: Ray Tune domains in dicts and lists) as plain JSON data that is the same for
    the same space in every process: an object as its class name and attributes (a domain's bounds or
    categories and its sampler), never its address."""
    if isinstance(value, dict):
        return {str(key): described(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [described(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return {"class": type(value).__name__, **{key: described(item) for key, item in sorted(vars(value).items())}}


def check_same_search(storage: Path, algo: str, definition: dict[str, Any]) -> None:
    """Record what ``algo``'s search under ``storage`` is (trials, levels, steps, episodes, seed, the
    search space :func:`described`, the fixed settings) in ``<algo>.search.json`` beside Ray's folder;
    a search resumed there with another definition is refused (its trials would mix two searches).

    Only the keys the recorded file holds are compared: a key it lacks (a file written before that key
    was recorded) is no difference, so such a search still resumes; a key it holds that ``definition``
    lacks or changes is one. The file is written once, when the search starts."""
    marker = storage / f"{algo}.search.json"
    if marker.exists():
        recorded = json.loads(marker.read_text())
        current = json.loads(json.dumps(definition))  # as the file holds it (lists, string keys)
        changed = sorted(key for key in recorded if recorded[key] != current.get(key))
        if changed:
            before = {key: recorded[key] for key in changed}
            raise SystemExit(f"{algo}: the search in {storage} was started with other {', '.join(changed)} ({before}); "
                             f"give another --storage, or delete {storage / algo} and {marker} to start afresh")
        return
    storage.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(definition, sort_keys=True) + "\n")


DIRTY = "-dirty"  # the suffix of a commit whose tree had uncommitted changes


def commit(tree: Path | None = None) -> str:
    """The commit ``tree`` (None: this checkout) is at (12 hex digits), ``-dirty`` when tracked files differ
    from it (what it made is then not reproducible from it); ``unknown`` outside a git checkout."""
    tree = ROOT if tree is None else tree

    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=tree, capture_output=True, text=True).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel") or "/nonexistent").resolve() != Path(tree).resolve():
            return "unknown"
        head, dirty = git("rev-parse", "--short=12", "HEAD"), git("status", "--porcelain", "--untracked-files=no")
    except OSError:
        return "unknown"
    return (head + (DIRTY if dirty else "")) if head else "unknown"


def is_dirty(revision: str) -> bool:
    """Whether ``revision`` (as :func:`commit` writes it) is a tree with uncommitted changes."""
    return revision.endswith(DIRTY)


def write_frozen(record: dict[str, Any], folder: Path) -> Path:
    """``<folder>/<algo>.json``: the frozen settings (the journal beside it lists every trial)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{record['algorithm']}.json"
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return path


def check_levels(levels: Sequence[str]) -> None:
    """Make each tuning level once, so that one that cannot be made (an unknown id, tau2 data not installed)
    stops the search before any trial trains, with the env's own error."""
    import gymnasium as gym

    import agentgym_envs  # noqa: F401  (registers the envs)

    for env_id in levels:
        try:
            gym.make(env_id).close()
        except Exception as exc:  # any failure to make it: the search cannot score this level
            raise SystemExit(f"tuning level {env_id} cannot be made: {type(exc).__name__}: {exc}") from exc


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--algos", nargs="+", required=True, help="algorithms to tune (trainers' names, or a user's "
                        "algorithm: a module path, or a name an --import module registers; its module declares search_space())")
    parser.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE",
                        help="a module to import first, in the driver and in every trial (it registers algorithms; "
                        "repeat the option for more)")
    parser.add_argument("--trials", type=int, default=TRIALS, help="trials per algorithm (the same for each)")
    parser.add_argument("--levels", nargs="+", default=list(TUNING_LEVELS), help="the tuning set of env ids")
    parser.add_argument("--steps", type=int, default=STEPS, help="env steps per level and trial")
    parser.add_argument("--episodes", type=int, default=EPISODES, help="validation episodes per level and trial")
    parser.add_argument("--storage", type=Path, default=ROOT / "runs" / "tuning", help="Ray Tune's experiment folder")
    parser.add_argument("--out", type=Path, default=TUNED, help="where the frozen settings are written")
    parser.add_argument("--address", default=None, help="a Ray cluster's address (default: a local Ray)")
    parser.add_argument("--concurrent", type=int, default=2, help="trials at once")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import ray

    from agentgym_envs.scale import init_ray

    import_modules(args.imports)
    try:
        for algo in args.algos:
            search_space(algo)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    check_levels(args.levels)
    owned = not ray.is_initialized()  # a Ray this process joined before (a test's) stays up
    init_ray(args.address, None if args.address else args.concurrent)
    try:
        for algo in args.algos:
            finished_before = (args.out / f"{algo}.json").exists()
            record = tune_algorithm(algo, args.trials, args.levels, args.steps, args.episodes, args.storage,
                                    args.concurrent, args.out, args.imports)
            path = args.out / f"{algo}.json" if finished_before else write_frozen(record, args.out)
            print(f"{algo}: best {METRIC} {record[METRIC]:.3f} over {record['trials']} trials -> {path}"
                  + (" (frozen before)" if finished_before else ""))
    finally:
        if owned:
            ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

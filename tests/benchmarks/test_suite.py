"""The benchmark suite end to end on its smoke preset (CustomerSupport-L0, random, expert, ppo and
MaskablePPO, 2 seeds, 3,072 env steps): rows with provenance, curves on one grid, every final
episode kept, the page; a row's command reproduces it, and the audit re-runs rows and finds a
changed one; an interrupted run resumes with its sittings summed; changed settings run a row again."""

from __future__ import annotations

import importlib
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agentgym_envs.cli import parse_override
from benchmarks.suite_lib.runner import machine

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite():
    return importlib.import_module("benchmarks.suite")


@pytest.fixture
def plan():
    return importlib.import_module("benchmarks.suite_lib.plan")


@pytest.fixture
def store():
    return importlib.import_module("benchmarks.suite_lib.store")


def smoke(tmp: Path, *extra: str) -> list[str]:
    return ["--preset", "smoke", "--out", str(tmp / "results"), "--runs", str(tmp / "runs"), "--reps", "100", *extra]


@pytest.fixture(scope="module")
def smoke_sitting(tmp_path_factory):
    """One sitting of the smoke preset, run as the command line runs it; its folder."""
    tmp = tmp_path_factory.mktemp("smoke")
    subprocess.run([sys.executable, "-m", "benchmarks.suite", *smoke(tmp)], check=True, cwd=ROOT, capture_output=True,
                   text=True)  # as the README runs it: from the repository root
    return tmp


def rows_of(tmp: Path) -> dict[tuple[str, int], dict[str, str]]:
    from benchmarks.suite_lib.store import read_rows

    return {(r["algorithm"], int(r["seed"])): r for r in read_rows(tmp / "results" / "suite_smoke.csv")}


def test_a_sitting_writes_rows_with_their_provenance(smoke_sitting):
    rows = rows_of(smoke_sitting)
    assert sorted(rows) == [("expert", 0), ("ppo", 0), ("ppo", 1), ("random", 0), ("sb3-maskable-ppo", 0),
                            ("sb3-maskable-ppo", 1)]
    assert float(rows["expert", 0]["test_success"]) == 1.0
    for row in rows.values():
        assert row["command"].startswith(f"agentgym train AgentGym/CustomerSupport-L0-v1 --algo {row['algorithm']} ")
        assert len(row["settings_hash"]) == 16 and row["commit"] and row["sittings"] == "1"
        assert all(row[name] for name in ("torch", "stable_baselines3", "gymnasium"))
        assert row["cpu"].endswith(" / " + torch.backends.cpu.get_cpu_capability())
        assert float(row["wall_eval_s"]) >= 0 and (row["algorithm"] == "expert" or float(row["wall_train_s"]) > 0)
    assert rows["ppo", 0]["settings_hash"] == rows["ppo", 1]["settings_hash"] != rows["sb3-maskable-ppo", 0]["settings_hash"]


def test_every_algorithm_curves_on_the_same_grid_and_every_final_episode_is_kept(store, smoke_sitting):
    results = smoke_sitting / "results"
    curves = store.read_curves(results / "suite_smoke_curves")
    grid = {(p["algorithm"], p["seed"]): [] for p in curves}
    for point in curves:
        if point["split"] == "validation":
            grid[point["algorithm"], point["seed"]].append(int(point["env_steps"]))
    trained = [run for run in grid if run[0] in ("ppo", "sb3-maskable-ppo")]
    assert len(trained) == 4 and all(grid[run] == [1024, 2048, 3072][: len(grid[run])] for run in trained)
    rows = rows_of(smoke_sitting)
    for algorithm, seed in trained:  # a run that stopped early held 0.99 on validation at its last two points
        points = [float(p["success"]) for p in curves if (p["algorithm"], p["seed"], p["split"]) == (algorithm, seed, "validation")]
        if int(rows[algorithm, int(seed)]["env_steps"]) < 3072:
            assert len(points) == 2 and min(points) >= 0.99
    episodes = store.read_family_files(results / "suite_smoke_episodes", "*.csv.gz")
    assert list(episodes[0]) == list(store.EPISODE_FIELDS)
    test = [e for e in episodes if e["split"] == "test" and e["algorithm"] == "ppo" and e["seed"] == "0"]
    assert len(test) == 20 and all(e["unit_id"] and e["task_id"] for e in test)
    row = rows["ppo", 0]
    assert sum(int(e["success"]) for e in test) / 20 == pytest.approx(float(row["test_success"]))


def test_every_algorithms_episodes_name_the_unit_the_env_gives_their_task(store, smoke_sitting):
    episodes = store.read_family_files(smoke_sitting / "results" / "suite_smoke_episodes", "*.csv.gz")
    units: dict[tuple[str, str], set[str]] = {}
    for episode in episodes:
        units.setdefault((episode["split"], episode["task_id"]), set()).add(episode["unit_id"])
    assert {e["algorithm"] for e in episodes} == {"ppo", "sb3-maskable-ppo", "random", "expert"}
    assert all(len(named) == 1 for named in units.values())  # the same unit, whichever algorithm played the task
    assert all(e["unit_id"] != e["task_id"] for e in episodes)  # a ticket's unit is its phrasing template


def test_the_page_opens_with_the_rliable_figures_and_the_iqm_table(smoke_sitting):
    results = smoke_sitting / "results"
    page = (results / "suite_smoke.md").read_text(encoding="utf-8")
    assert "Command: `python -m benchmarks.suite --preset smoke`" in page
    assert "`python -m benchmarks.suite_report --preset smoke`" in page
    head, tables = page.split("## IQM of test success, 95 % intervals", 1)
    for figure in ("aggregate", "improvement", "profile", "sample_efficiency"):
        assert f"(suite_smoke_{figure}.png)" in head and (results / f"suite_smoke_{figure}.png").stat().st_size > 0
    assert "| all (1 level) | " in tables and "## Orderings" in tables
    assert f"its processor (`cpu`: {machine()} 6;" in head  # the smoke sitting's six runs, made here
    assert "[customer_support](suite_smoke_levels/customer_support.md)" in tables
    levels = (results / "suite_smoke_levels" / "customer_support.md").read_text(encoding="utf-8")
    assert "| L0 |" in levels and "Test success (mean" in levels
    assert "ppo vs sb3-maskable-ppo" in tables or "ppo > sb3-maskable-ppo" in tables or "sb3-maskable-ppo > ppo" in tables


def test_the_report_imports_neither_torch_nor_sb3(smoke_sitting):
    script = ("import sys; from benchmarks import suite_report; "
              f"suite_report.main(['--preset', 'smoke', '--out', {str(smoke_sitting / 'results')!r}, '--reps', '50']); "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'stable_baselines3', 'sb3_contrib')))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_rows_command_reproduces_its_test_success(smoke_sitting, tmp_path):
    row = rows_of(smoke_sitting)["ppo", 1]
    words = shlex.split(row["command"])
    words[0] = str(Path(sys.executable).with_name("agentgym"))
    subprocess.run(words, cwd=tmp_path, check=True, capture_output=True, text=True)
    result, = tmp_path.glob("runs/reproduce/*/result.json")
    assert json.loads(result.read_text())["test_metrics"]["success"] == pytest.approx(float(row["test_success"]))


def test_the_audit_reruns_rows_reports_the_one_whose_committed_episodes_changed_and_resumes(smoke_sitting, store, tmp_path,
                                                                                                 monkeypatch):
    from benchmarks import suite_audit

    shutil.copytree(smoke_sitting / "results", tmp_path / "results")
    episodes_file = tmp_path / "results" / "suite_smoke_episodes" / "customer_support.csv.gz"
    episodes = store.read_rows(episodes_file)
    changed = next(e for e in episodes if (e["algorithm"], e["seed"], e["split"]) == ("ppo", "1", "test"))
    changed["turns"] = str(int(changed["turns"]) + 1)
    store.write_rows(episodes_file, store.EPISODE_FIELDS, episodes)

    code = suite_audit.main(["--table", "suite_smoke", "--out", str(tmp_path / "results"), "--here",
                             "--rows", "customer_support:L0:random:0", "customer_support:L0:ppo:1"])

    audit = {a["algorithm"]: a for a in store.read_rows(tmp_path / "results" / "suite_smoke_audit.csv")}
    assert code == 1
    assert (audit["random"]["equal"], audit["random"]["episodes_equal"]) == ("True", "True")
    assert (audit["ppo"]["equal"], audit["ppo"]["episodes_equal"]) == ("False", "False")
    assert audit["ppo"]["rerun_test_success"] == str(float(rows_of(smoke_sitting)["ppo", 1]["test_success"]))
    assert "Equal: 1 of 2 rows" in (tmp_path / "results" / "suite_smoke_audit.md").read_text(encoding="utf-8")
    assert audit["ppo"]["rerun_cpu"] == machine() == rows_of(smoke_sitting)["ppo", 1]["cpu"]
    assert "| NO | yes |" in (tmp_path / "results" / "suite_smoke_audit.md").read_text(encoding="utf-8")  # equal: no; same CPU: yes

    def never(*args):
        raise AssertionError("a resumed audit re-ran a row it holds")

    monkeypatch.setattr(suite_audit, "rerun", never)
    again = suite_audit.main(["--table", "suite_smoke", "--out", str(tmp_path / "results"), "--here", "--resume",
                              "--rows", "customer_support:L0:random:0", "customer_support:L0:ppo:1"])
    assert again == 1 and store.read_rows(tmp_path / "results" / "suite_smoke_audit.csv") == list(audit.values())


def test_the_audit_checks_a_commit_out_in_a_worktree_it_removes_afterwards(tmp_path):
    from benchmarks.suite_audit import checkout

    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with checkout(head, tmp_path) as tree:
        assert (tree / "pyproject.toml").read_bytes() == subprocess.run(
            ["git", "show", "HEAD:pyproject.toml"], cwd=ROOT, capture_output=True, check=True).stdout
    listed = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert not tree.exists() and str(tree) not in listed


def test_sittings_of_one_table_side_by_side_keep_each_others_rows(plan, store, smoke_sitting, tmp_path):
    from benchmarks.suite_lib.sitting import TableFiles, sit

    shutil.copytree(smoke_sitting / "results", tmp_path / "results")
    files = TableFiles(tmp_path / "results", "suite_smoke")
    mine = next(c for c in plan.cells(plan.PRESETS["smoke"], ["customer_support"]) if c.algorithm == "ppo")
    theirs = ("customer_support", "L0", "another-sitting", 0)

    def finished(key: tuple) -> dict:  # mine's run, as the run of ``key``
        def of(records: list[dict]) -> list[dict]:
            return [{**r, "algorithm": key[2], "seed": key[3]} for r in records if store.row_key(r) == mine.key]

        return {"row": of(files.rows())[0], "curves": of(files.curve_points()), "episodes": of(files.episode_rows())}

    done, other = finished(mine.key), finished(theirs)
    store.write_rows(files.table, store.FIELDS, [r for r in files.rows() if store.row_key(r) != mine.key])

    def launch(jobs):  # while this sitting's run goes on, another sitting of the table finishes one of its own
        files.record(theirs, other)
        for job in jobs:
            yield job, lambda: done

    assert sit([mine], files, tmp_path / "runs", "cpu", launch) == 0
    keys = [store.row_key(r) for r in files.rows()]
    assert mine.key in keys and theirs in keys and len(keys) == len(set(keys))
    assert {store.row_key(e) for e in files.episode_rows()} >= {mine.key, theirs}
    assert {store.row_key(p) for p in files.curve_points()} >= {mine.key, theirs}


def test_once_the_stop_file_exists_no_run_starts_and_the_run_under_way_is_written(plan, store, smoke_sitting, tmp_path,
                                                                                   capsys):
    from benchmarks.suite_lib.sitting import TableFiles, sit

    shutil.copytree(smoke_sitting / "results", tmp_path / "results")
    files = TableFiles(tmp_path / "results", "suite_smoke")
    first, second = [c for c in plan.cells(plan.PRESETS["smoke"], ["customer_support"]) if c.algorithm == "ppo"][:2]
    finished = {key: {"row": [r for r in files.rows() if store.row_key(r) == key][0], "curves": [], "episodes": []}
                for key in (first.key, second.key)}
    store.write_rows(files.table, store.FIELDS, [r for r in files.rows() if store.row_key(r) not in finished])
    stop, started = tmp_path / "STOP", []

    def launch(jobs):
        for job in jobs:
            started.append(job.cell.key)
            stop.touch()  # asked to stop while this run goes on
            yield job, lambda job=job: finished[job.cell.key]

    assert sit([first, second], files, tmp_path / "runs", "cpu", launch, stop_file=stop) == 0
    assert started == [first.key]
    keys = {store.row_key(r) for r in files.rows()}
    assert first.key in keys and second.key not in keys
    assert f"{stop} exists: no further run starts" in capsys.readouterr().out


def test_a_second_sitting_runs_nothing_when_the_settings_are_unchanged(suite, smoke_sitting, capsys, tmp_path):
    shutil.copytree(smoke_sitting / "results", tmp_path / "results")
    assert suite.main(smoke(tmp_path)) == 0
    assert " env steps" not in capsys.readouterr().out


def test_a_sitting_at_a_commit_runs_again_the_rows_of_a_tree_with_uncommitted_changes(
        suite, store, smoke_sitting, capsys, tmp_path, monkeypatch):
    import benchmarks.suite_lib.sitting as sitting

    shutil.copytree(smoke_sitting / "results", tmp_path / "results")
    table = tmp_path / "results" / "suite_smoke.csv"
    rows = store.read_rows(table)
    for row in rows:
        row["commit"] = "0123456789ab" + ("-dirty" if row["algorithm"] == "random" else "")
    store.write_rows(table, store.FIELDS, rows)

    monkeypatch.setattr(sitting, "commit", lambda: "0123456789ab-dirty")  # from a dirty tree: nothing to gain
    assert suite.main(smoke(tmp_path)) == 0
    assert " env steps" not in capsys.readouterr().out
    monkeypatch.setattr(sitting, "commit", lambda: "fedcba987654")
    assert suite.main(smoke(tmp_path)) == 0
    ran = [line for line in capsys.readouterr().out.splitlines() if line.endswith(" env steps")]
    assert len(ran) == 1 and "random" in ran[0]
    assert {r["algorithm"]: r["commit"] for r in rows_of(tmp_path).values()}["random"] == "fedcba987654"


def test_an_interrupted_run_resumes_with_its_sittings_summed_and_changed_settings_run_again(
        suite, plan, smoke_sitting, tmp_path, capsys, monkeypatch):
    import trainers.lifecycle as lifecycle

    finish, add_sitting = lifecycle.finish, lifecycle.add_sitting
    added = []  # each sitting's own seconds (training, final evaluation), as the lifecycle adds them

    def killed(*args, **kwargs):  # the sitting ends as Ctrl-C ends it, after training, before the final evaluation
        monkeypatch.setattr(lifecycle, "finish", finish)
        raise KeyboardInterrupt

    def recorded(run_dir, train_s, eval_s):
        added.append((train_s, eval_s))
        return add_sitting(run_dir, train_s, eval_s)

    monkeypatch.setattr(lifecycle, "finish", killed)
    monkeypatch.setattr(lifecycle, "add_sitting", recorded)
    with pytest.raises(KeyboardInterrupt):
        suite.main(smoke(tmp_path, "--algos", "ppo", "--max-runs", "1"))
    run_dir = tmp_path / "runs" / "suite_smoke" / "CustomerSupport-L0-v1__ppo__seed0"
    first = json.loads((run_dir / "wall.json").read_text())
    assert first["sittings"] == 1 and first["train_s"] > 0
    assert suite.main(smoke(tmp_path, "--algos", "ppo", "--max-runs", "1")) == 0
    (_, _), (train_s, eval_s) = added
    walls = json.loads((run_dir / "wall.json").read_text())
    assert walls["sittings"] == 2 and eval_s > 0
    assert (walls["train_s"], walls["eval_s"]) == pytest.approx((first["train_s"] + train_s, first["eval_s"] + eval_s))
    row = rows_of(tmp_path)["ppo", 0]
    assert (row["sittings"], float(row["wall_train_s"]), float(row["wall_eval_s"])) == \
        ("2", round(walls["train_s"], 3), round(walls["eval_s"], 3))
    assert row["test_success"] == rows_of(smoke_sitting)["ppo", 0]["test_success"]  # resumed exactly

    monkeypatch.setitem(plan.SETTINGS, "ppo", {**plan.SETTINGS["ppo"], "ent_coef": 0.02})
    capsys.readouterr()
    assert suite.main(smoke(tmp_path, "--algos", "ppo", "--max-runs", "1")) == 0
    assert "starting afresh" in capsys.readouterr().out
    again = rows_of(tmp_path)["ppo", 0]
    assert again["settings_hash"] != row["settings_hash"] and again["sittings"] == "1"
    assert "ent_coef=0.02" in again["command"]


def test_an_interrupted_sb3_run_starts_afresh_so_that_its_row_is_its_commands_run(
        suite, smoke_sitting, tmp_path, capsys, monkeypatch):
    import trainers.lifecycle as lifecycle

    finish = lifecycle.finish

    def killed(*args, **kwargs):
        monkeypatch.setattr(lifecycle, "finish", finish)
        raise KeyboardInterrupt

    monkeypatch.setattr(lifecycle, "finish", killed)
    argv = smoke(tmp_path, "--algos", "sb3-maskable-ppo", "--max-runs", "1")
    with pytest.raises(KeyboardInterrupt):
        suite.main(argv)
    capsys.readouterr()
    assert suite.main(argv) == 0
    assert "starting afresh: it would not resume exactly" in capsys.readouterr().out
    row = rows_of(tmp_path)["sb3-maskable-ppo", 0]
    assert row["sittings"] == "1"
    assert row["test_success"] == rows_of(smoke_sitting)["sb3-maskable-ppo", 0]["test_success"]


def test_the_settings_hash_changes_with_every_setting_and_budget(plan):
    cell, = [c for c in plan.cells(plan.PRESETS["smoke"], ["customer_support"]) if c.key[2:] == ("ppo", 0)]
    base = cell.settings_hash("cpu")
    changed = [cell.__class__(**{**cell.__dict__, **change}) for change in (
        {"env_steps": 4096}, {"eval_episodes": 21}, {"overrides": {**cell.overrides, "ent_coef": 0.02}},
        {"overrides": {**cell.overrides, "env_kwargs": {"max_turns": 5}}}, {"algorithm": "sb3-ppo"})]
    assert len({base, *(c.settings_hash("cpu") for c in changed), cell.settings_hash("cuda")}) == 7
    assert cell.__class__(**{**cell.__dict__, "seed": 1}).settings_hash("cpu") == base


def test_a_commands_settings_read_back_as_the_cells(plan):
    for cell in plan.cells(plan.PRESETS["full"], ["coding"]):
        words = shlex.split(cell.command("cpu"))
        settings = dict(parse_override(words[i + 1]) for i, word in enumerate(words) if word == "--set")
        assert settings == cell.overrides


def test_the_full_preset_shares_one_grid_and_early_stopping(plan):
    for cell in plan.cells(plan.PRESETS["full"], ["customer_support", "coding"]):
        if cell.algorithm in plan.REFERENCES:
            assert "curve_every" not in cell.overrides
            continue
        assert cell.overrides["curve_every"] == plan.GRID and cell.overrides["early_stop"] == 0.99
        assert cell.env_steps % plan.GRID == 0
        assert cell.overrides.get("bc_steps", plan.GRID) == plan.GRID


def test_an_algorithm_outside_the_preset_is_a_clear_error(suite, tmp_path, capsys):
    assert suite.main(smoke(tmp_path, "--algos", "nope")) == 2
    assert "algorithm(s) ['nope'] are not in the smoke preset" in capsys.readouterr().err


def test_levels_select_those_levels_of_every_family_named(suite, tmp_path, monkeypatch):
    planned = []
    monkeypatch.setattr(suite, "sit", lambda cells, *args, **kwargs: planned.extend(cells) or 0)
    argv = ["--preset", "full", "--envs", "customer_support", "math", "--algos", "ppo", "--out", str(tmp_path)]
    assert suite.main([*argv, "--levels", "L1", "v1"]) == 0
    assert {(c.env, c.level) for c in planned} == {("customer_support", "L1"), ("customer_support", "v1"), ("math", "L1"),
                                                   ("math", "v1")}


def test_a_level_no_family_has_is_a_clear_error(suite, tmp_path, capsys):
    assert suite.main(smoke(tmp_path, "--levels", "L7")) == 2
    assert "level(s) ['L7'] are in none of the families" in capsys.readouterr().err


def test_the_full_preset_trains_each_algorithm_with_its_frozen_settings_and_leaves_out_the_untuned(plan, monkeypatch,
                                                                                                   tmp_path):
    frozen = {"observation": "features", "learning_rate": 0.0007, "num_steps": 64}
    (tmp_path / "ppo.json").write_text(json.dumps({"algorithm": "ppo", "settings": frozen}))
    monkeypatch.setattr(plan, "TUNED", tmp_path)
    planned = plan.cells(plan.PRESETS["full"], ["customer_support", "coding"])
    ppo = [c for c in planned if c.algorithm == "ppo"]
    assert ppo and all({k: c.overrides[k] for k in frozen} == frozen for c in ppo)  # the same on every level
    assert {c.algorithm for c in planned} == {"random", "expert", "ppo", *plan.DEFAULT_ROWS}
    assert set(plan.untuned(plan.PRESETS["full"])) == set(plan.TRAINED) - {"ppo"}


def test_a_defaults_row_trains_its_sb3_algorithm_with_sb3s_defaults(plan):
    cell = next(c for c in plan.cells(plan.PRESETS["full"], ["math"]) if c.algorithm == "sb3-maskable-ppo-defaults")
    words = shlex.split(cell.command("cpu"))
    assert words[words.index("--algo") + 1] == "sb3-maskable-ppo"
    settings = dict(parse_override(words[i + 1]) for i, word in enumerate(words) if word == "--set")
    assert {k: settings[k] for k in plan.SB3_PPO_DEFAULTS} == plan.SB3_PPO_DEFAULTS
    assert settings["early_stop"] == plan.STOP_AT  # the protocol every trained row shares


def test_the_page_names_the_rollout_a_defaults_row_trains_in(plan):
    from trainers.sb3_baselines import MaskablePPOConfig, PPOConfig

    assert PPOConfig().n_envs == MaskablePPOConfig().n_envs == plan.SB3_N_ENVS
    rollout = plan.SB3_PPO_DEFAULTS["n_steps"] * plan.SB3_N_ENVS
    assert f"rollouts of {rollout:,} env steps" in plan.settings_text(plan.PRESETS["full"])


def test_a_defaults_row_reproduces_in_its_own_run_directory(plan, monkeypatch, tmp_path):
    (tmp_path / "sb3-ppo.json").write_text(json.dumps({"algorithm": "sb3-ppo", "settings": {"n_steps": 64}}))
    monkeypatch.setattr(plan, "TUNED", tmp_path)
    planned = plan.cells(plan.PRESETS["full"], ["math"])
    tuned, defaults = (next(c for c in planned if c.key[2:] == (algorithm, 0)) for algorithm in ("sb3-ppo", "sb3-ppo-defaults"))

    def run_dir(cell) -> str:
        words = shlex.split(cell.command("cpu"))
        return words[words.index("--run-dir") + 1]

    assert [run_dir(tuned), run_dir(defaults)] == ["runs/reproduce", "runs/reproduce/sb3-ppo-defaults"]  # one --algo
    assert defaults.run_root("/x/runs/suite") == "/x/runs/suite/sb3-ppo-defaults"  # as the suite runs it


def test_the_page_counts_the_runs_of_algorithms_not_tuned_yet_apart(plan, monkeypatch, tmp_path):
    from benchmarks.suite_lib.stats import Outcomes
    from benchmarks.suite_report import markdown

    (tmp_path / "ppo.json").write_text(json.dumps({"algorithm": "ppo", "settings": {"num_steps": 64}}))
    monkeypatch.setattr(plan, "TUNED", tmp_path)
    full = plan.PRESETS["full"]
    now = len(plan.cells(full, list(plan.FAMILIES)))
    later = len(plan.cells(full, list(plan.FAMILIES), untuned_too=True)) - now
    waiting = [a for a in plan.TRAINED if a != "ppo"]
    page = markdown([], [], {}, [], "full", full, "suite", 10, Outcomes({}, {}))
    assert f"Runs: 0 of the {now} the preset plans now, and {later} more once {', '.join(waiting)} are tuned" in page
    assert f"The {now} runs left and the {later} of the algorithms not tuned yet: about " in page


def test_the_hours_left_take_a_levels_median_pace_so_that_a_run_on_a_crowded_machine_does_not_set_them(plan):
    from benchmarks.suite_report import estimated_hours

    smoke = plan.PRESETS["smoke"]  # customer_support L0: random and expert once, ppo and MaskablePPO twice, 3,072 steps
    references = [{"env": "customer_support", "level": "L0", "algorithm": a, "seed": "0", "env_steps": "0",
                   "wall_train_s": "0", "wall_eval_s": "5"} for a in plan.REFERENCES]
    # three earlier runs of ppo at 1 s an env step, one of them ten times as long
    superseded = [{"env": "customer_support", "level": "L0", "algorithm": "ppo", "seed": str(seed), "env_steps": "3072",
                   "wall_s": str(wall)} for seed, wall in enumerate((3072, 30720, 3072))]
    # four runs left (ppo and MaskablePPO, the latter at its family's ppo pace), 3,072 s each
    assert estimated_hours(smoke, references, superseded) == pytest.approx(4 * 3072 / 3600)


def test_an_algorithm_without_runs_in_a_family_is_estimated_at_its_ppo_pace_times_its_pace_over_ppos_elsewhere():
    from benchmarks.suite_report import relative_pace

    family_pace = {("a", "ppo"): 1.0, ("a", "x"): 2.0, ("b", "ppo"): 2.0, ("b", "x"): 6.0, ("c", "x"): 5.0}
    assert relative_pace(family_pace, "x") == 2.5  # the median of 2 and 3; family c has no ppo pace
    assert relative_pace(family_pace, "y") == 1.0

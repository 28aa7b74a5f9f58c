"""A user's algorithm on the suite's table, end to end with the example (REINFORCE on a linear
policy) on the smoke preset's level: tuned by the equal-tuning search (2 trials here), run with the
preset's budgets (1 seed here), its rows with their provenance, its rliable comparison against the
committed smoke baseline rows, which are not run again; no baseline rows is said, not skipped."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.suite_lib.store import EPISODE_FIELDS, read_family_files, read_rows

pytest.importorskip("optuna")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = "benchmarks.examples.reinforce"
BASELINES = ROOT / "benchmarks" / "results"


def command(tmp: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.your_algorithm", EXAMPLE, "--preset", "smoke", "--seeds", "1",
            "--trials", "2", "--tuning-levels", "AgentGym/CustomerSupport-L0-v1", "--tuning-steps", "256",
            "--tuning-episodes", "4", "--concurrent", "1", "--tuned", str(tmp / "tuned"), "--storage", str(tmp / "ray"),
            "--out", str(tmp / "results"), "--runs", str(tmp / "runs"), "--reps", "100", *extra]


@pytest.fixture(scope="module")
def sitting(tmp_path_factory):
    """The one command, run as the docs run it (from the repository root); its folder and output."""
    tmp = tmp_path_factory.mktemp("yours")
    baseline = (BASELINES / "suite_smoke.csv").read_bytes()
    done = subprocess.run(command(tmp, "--baselines", str(BASELINES)), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (BASELINES / "suite_smoke.csv").read_bytes() == baseline
    return tmp, done


def test_the_search_ran_the_modules_space_on_validation_and_froze_it(sitting):
    tmp, _ = sitting
    record = json.loads((tmp / "tuned" / f"{EXAMPLE}.json").read_text())
    assert record["trials"] == 2 and record["levels"] == ["AgentGym/CustomerSupport-L0-v1"]
    assert set(record["settings"]) == {"learning_rate", "gamma", "batch_episodes"}
    assert len((tmp / "tuned" / f"{EXAMPLE}_trials.csv").read_text().splitlines()) == 3


def test_its_rows_follow_the_presets_protocol_with_their_provenance(sitting):
    tmp, _ = sitting
    row, = read_rows(tmp / "results" / "suite_smoke_reinforce.csv")
    record = json.loads((tmp / "tuned" / f"{EXAMPLE}.json").read_text())
    assert (row["env"], row["level"], row["algorithm"], row["seed"]) == ("customer_support", "L0", EXAMPLE, "0")
    assert row["budget"] == "3072" and len(row["settings_hash"]) == 16 and row["commit"] and row["torch"]
    words = shlex.split(row["command"])
    assert words[:7] == ["python", "-m", "agentgym_envs.cli", "train", "AgentGym/CustomerSupport-L0-v1", "--algo", EXAMPLE]
    assert {"curve_every=1024", "early_stop=0.99", f"learning_rate={record['settings']['learning_rate']}"} <= set(words)
    episodes = read_family_files(tmp / "results" / "suite_smoke_reinforce_episodes", "*.csv.gz")
    test = [e for e in episodes if e["split"] == "test"]
    assert list(episodes[0]) == list(EPISODE_FIELDS) and len(test) == 20
    assert sum(int(e["success"]) for e in test) / 20 == pytest.approx(float(row["test_success"]))
    assert not list((tmp / "runs").glob("*/*__ppo__*"))  # the baselines were not run


def test_a_rows_command_reproduces_its_test_success(sitting, tmp_path):
    tmp, _ = sitting
    row, = read_rows(tmp / "results" / "suite_smoke_reinforce.csv")
    words = shlex.split(row["command"])
    words[0] = sys.executable
    words[words.index("--run-dir") + 1] = str(tmp_path / "runs")
    subprocess.run(words, cwd=ROOT, check=True, capture_output=True, text=True)  # from the repository root, as written
    result, = tmp_path.glob("runs/*/result.json")
    assert json.loads(result.read_text())["test_metrics"]["success"] == pytest.approx(float(row["test_success"]))


def test_the_page_compares_it_with_the_committed_baselines(sitting):
    tmp, done = sitting
    page = (tmp / "results" / "suite_smoke_reinforce.md").read_text()
    assert f"| families | random | expert | ppo | sb3-maskable-ppo | {EXAMPLE} |" in page
    assert "| all (1 level) |" in page and "Baselines from [suite_smoke.csv]" in page
    orderings = page.split("## Orderings", 1)[1].split("\n## ", 1)[0]
    for baseline in ("random", "expert", "ppo", "sb3-maskable-ppo"):
        assert f"{baseline} vs {EXAMPLE}" in orderings or f"{baseline} > {EXAMPLE}" in orderings \
            or f"{EXAMPLE} > {baseline}" in orderings
    assert "**Not the protocol's tuning budget**" in page  # 2 trials, not 16: said on the page
    for figure in ("aggregate", "profile"):
        assert (tmp / "results" / f"suite_smoke_reinforce_{figure}.png").stat().st_size > 0
    assert f"page: {tmp / 'results' / 'suite_smoke_reinforce.md'}" in done.stdout


def test_without_committed_baseline_rows_it_says_so_and_fails(sitting, tmp_path):
    tmp, _ = sitting
    done = subprocess.run(command(tmp, "--baselines", str(tmp_path)), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert "no comparison: no baseline rows of the smoke preset" in done.stderr
    assert " env steps" not in done.stdout  # its row was kept: nothing ran again
    assert "**No comparison**: no baseline rows of the smoke preset" in (tmp / "results" / "suite_smoke_reinforce.md").read_text()


def test_an_unknown_algorithm_or_a_built_in_is_a_clear_error(capsys):
    from benchmarks import your_algorithm

    assert your_algorithm.main(["no_such_package.algo"]) == 2
    assert "no module of that name can be imported" in capsys.readouterr().err
    assert your_algorithm.main(["ppo"]) == 2
    assert "one of the suite's own algorithms" in capsys.readouterr().err


def test_a_name_registered_by_an_imported_module_trains_from_the_command_line(tmp_path):
    (tmp_path / "my_plugins.py").write_text(
        "from trainers.lifecycle import Algorithm, register_algorithm\n"
        f"register_algorithm('linear-reinforce', Algorithm('{EXAMPLE}:train', '{EXAMPLE}:load_policy', 'policy.npz',"
        f" config='{EXAMPLE}:Config'))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH")]))}
    words = [str(Path(sys.executable).with_name("agentgym")), "train", "AgentGym/CustomerSupport-L0-v1", "--algo",
             "linear-reinforce", "--total-steps", "64", "--eval-episodes", "2", "--no-progress", "--no-store"]
    missing = subprocess.run(words, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert missing.returncode != 0 and "unknown algorithm 'linear-reinforce'" in missing.stderr
    subprocess.run([*words, "--import", "my_plugins"], cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    run = tmp_path / "runs" / "CustomerSupport-L0-v1__linear-reinforce__seed0"
    assert (run / "policy.npz").exists()
    played = subprocess.run([words[0], "eval", str(run), "--episodes", "2", "--no-store"], cwd=tmp_path, env=env,
                            capture_output=True, text=True)  # without --import: the run recorded its entry points
    assert played.returncode == 0, played.stderr[-2000:]


def test_a_module_without_train_is_no_algorithm():
    from trainers.lifecycle import algorithm

    with pytest.raises(ValueError, match="module benchmarks.suite_lib.plan is no algorithm: it lacks train and load_policy"):
        algorithm("benchmarks.suite_lib.plan")


def test_a_module_whose_own_import_fails_shows_that_error(tmp_path, monkeypatch):
    from trainers.lifecycle import algorithm

    (tmp_path / "my_lab").mkdir()
    (tmp_path / "my_lab" / "__init__.py").write_text("")
    (tmp_path / "my_lab" / "algo.py").write_text("import no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency"):  # not "no module of that name"
        algorithm("my_lab.algo")


def test_a_modules_resume_counts_as_inexact_unless_it_says_so():
    from trainers.lifecycle import module_algorithm

    assert module_algorithm(EXAMPLE).exact_resume is False  # the example restarts its training on resume

"""Retiring a family version's runs from a suite table: rows, curves and episodes move together."""

from __future__ import annotations

from benchmarks.suite_lib.sitting import TableFiles
from benchmarks.suite_lib.store import EPISODE_FIELDS, FIELDS, write_curves, write_family_files, write_rows
from benchmarks.suite_retire import main, retire

RUNS = [("tau2_retail", "L1", "AgentGym/Tau2Retail-L1-v1"), ("tau2_retail", "v1", "AgentGym/Tau2Retail-v1"),
        ("math", "L1", "AgentGym/Math-L1-v1")]


def table(folder) -> TableFiles:
    files = TableFiles(folder, "suite")
    write_rows(files.table, FIELDS, [dict.fromkeys(FIELDS, "") | {"env": env, "level": level, "algorithm": "ppo",
                                                                   "seed": "0", "env_id": env_id} for env, level, env_id in RUNS])
    write_curves(files.curves, [{"env": env, "level": level, "algorithm": "ppo", "seed": "0", "split": "validation",
                                 "env_steps": "10240", "success": "0.5"} for env, level, _ in RUNS])
    write_family_files(files.episodes, ".csv.gz", EPISODE_FIELDS,
                       [dict.fromkeys(EPISODE_FIELDS, "1") | {"env": env, "level": level, "algorithm": "ppo", "seed": "0"}
                        for env, level, _ in RUNS])
    return files


def levels(rows) -> list[tuple[str, str]]:
    return sorted((row["env"], row["level"]) for row in rows)


def test_a_versions_runs_move_with_their_curves_and_episodes(tmp_path):
    files, retired = table(tmp_path), TableFiles(tmp_path, "suite_retired")
    assert retire(files, retired, {"AgentGym/Tau2Retail-L1-v1", "AgentGym/Tau2Retail-v1"}) == 2
    for read in ("rows", "curve_points", "episode_rows"):
        assert levels(getattr(files, read)()) == [("math", "L1")]
        assert levels(getattr(retired, read)()) == [("tau2_retail", "L1"), ("tau2_retail", "v1")]
    assert not (files.curves / "tau2_retail.csv").exists() and not (files.episodes / "tau2_retail.csv.gz").exists()


def test_retiring_again_moves_nothing_and_keeps_the_retired_rows(tmp_path):
    files, retired = table(tmp_path), TableFiles(tmp_path, "suite_retired")
    retire(files, retired, {"AgentGym/Tau2Retail-v1"})
    assert retire(files, retired, {"AgentGym/Tau2Retail-v1"}) == 0
    assert levels(retired.rows()) == [("tau2_retail", "v1")] and len(files.rows()) == 2


def test_the_command_moves_the_ladder_of_the_version_named(tmp_path, capsys):
    table(tmp_path)
    assert main(["tau2_retail", "1", "--out", str(tmp_path)]) == 0
    assert "2 runs of Tau2Retail-v1's ladder moved" in capsys.readouterr().out
    assert levels(TableFiles(tmp_path, "suite").rows()) == [("math", "L1")]

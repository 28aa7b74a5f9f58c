"""The benchmark suite's runs as Ray tasks on the session's local Ray (2 CPUs): the driver writes
the rows as the tasks finish, and a second sitting finds nothing left to run; with the stop file
there, no run starts."""

from __future__ import annotations


def test_the_suites_runs_fan_out_on_ray_and_the_driver_writes_their_rows(tmp_path, capsys):
    from benchmarks import suite
    from benchmarks.suite_lib.store import read_family_files, read_rows

    argv = ["--preset", "smoke", "--algos", "random", "expert", "--ray", "--out", str(tmp_path / "results"),
            "--runs", str(tmp_path / "runs"), "--reps", "50"]
    assert suite.main(argv) == 0
    rows = read_rows(tmp_path / "results" / "suite_smoke.csv")
    assert sorted((r["algorithm"], r["test_success"]) for r in rows) == [("expert", "1.0"), ("random", "0.0")]
    episodes = read_family_files(tmp_path / "results" / "suite_smoke_episodes", "*.csv.gz")
    assert len([e for e in episodes if e["split"] == "test"]) == 2 * 20
    capsys.readouterr()
    assert suite.main(argv) == 0
    assert " env steps" not in capsys.readouterr().out


def test_no_ray_task_starts_once_the_stop_file_exists(tmp_path, capsys):
    from benchmarks import suite

    (tmp_path / "STOP").touch()
    argv = ["--preset", "smoke", "--algos", "random", "--ray", "--out", str(tmp_path / "results"), "--runs",
            str(tmp_path / "runs"), "--stop-file", str(tmp_path / "STOP")]
    assert suite.main(argv) == 0
    assert "exists: no run starts" in capsys.readouterr().out
    assert not (tmp_path / "results" / "suite_smoke.csv").exists()

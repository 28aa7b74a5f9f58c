"""The benchmark suite's runs as Ray tasks on the session's local Ray (2 CPUs): the driver writes
the rows as the tasks finish, and a second sitting finds nothing left to run; once the stop file
exists no further run is submitted, and the runs under way are written."""

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
    assert "exists: no further run starts" in capsys.readouterr().out
    assert not (tmp_path / "results" / "suite_smoke.csv").exists()


def test_once_the_stop_file_appears_the_runs_under_way_are_written_and_no_other_starts(tmp_path):
    import ray

    from benchmarks.suite_lib import plan
    from benchmarks.suite_lib.runner import run_on_ray
    from benchmarks.suite_lib.sitting import TableFiles, sit

    cells = [c for c in plan.cells(plan.PRESETS["smoke"], ["customer_support", "math"]) if c.algorithm in ("random", "expert")]
    stop = tmp_path / "STOP"

    def launch(jobs):
        for job, outcome in run_on_ray(jobs, None, None):
            stop.touch()  # asked to stop as the first run finishes, while the others of the first batch go on
            yield job, outcome

    files = TableFiles(tmp_path / "results", "suite_smoke")
    assert sit(cells, files, tmp_path / "runs", "cpu", launch, stop_file=stop) == 0
    cpus = int(ray.cluster_resources()["CPU"])
    assert cpus < len(cells)
    assert len(files.rows()) == cpus  # the first batch, one run per CPU, and nothing after it

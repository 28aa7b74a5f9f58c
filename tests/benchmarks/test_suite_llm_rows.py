"""Language models as rows of the suite, through a real OpenAI-compatible endpoint (``server`` in
tests/conftest.py: ``transformers serve`` with the micro model): an evaluated-only row with its
provenance, on the test episodes the trained rows' final evaluation plays; its command reproduces
it; an interrupted evaluation resumes; changed settings or weights run it again."""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentgym_envs.cli import main as agentgym
from benchmarks.suite_lib import store

pytest.importorskip("openai")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def suite():
    return importlib.import_module("benchmarks.suite")


@pytest.fixture
def llm_rows():
    return importlib.import_module("benchmarks.suite_lib.llm_rows")


def arguments(tmp: Path, model: Path, url: str, *extra: str) -> list[str]:
    return ["--preset", "smoke", "--out", str(tmp / "results"), "--runs", str(tmp / "runs"), "--reps", "50",
            "--llm", f"micro=openai:{model}@{url}", "--llm-episodes", "2", "--llm-max-tokens", "8", *extra]


@pytest.fixture(scope="module")
def sitting(tmp_path_factory, server, micro_model):
    """The micro model's row and the expert's on CustomerSupport-L0, run as the command line runs them; its folder."""
    tmp = tmp_path_factory.mktemp("llm_rows")
    subprocess.run([sys.executable, "-m", "benchmarks.suite",
                    *arguments(tmp, micro_model, server, "--algos", "micro", "expert")],
                   check=True, cwd=ROOT, capture_output=True, text=True)
    return tmp


def rows_of(suite, tmp: Path) -> dict[str, dict[str, str]]:
    return {r["algorithm"]: r for r in store.read_rows(tmp / "results" / "suite_smoke.csv")}


def test_a_models_row_is_evaluated_only_with_its_provenance(suite, sitting, server, micro_model):
    row = rows_of(suite, sitting)["micro"]
    assert (row["env"], row["level"], row["seed"], row["env_id"]) == ("customer_support", "L0", "0",
                                                                       "AgentGym/CustomerSupport-L0-v1")
    assert (row["budget"], row["env_steps"], row["train_success"], row["wall_train_s"]) == ("0", "0", "", "0.0")
    assert row["model"] == f"{micro_model} @ {server}" and len(row["settings_hash"]) == 16 and row["commit"]
    assert row["command"].startswith(f"agentgym eval AgentGym/CustomerSupport-L0-v1 --policy openai --model {micro_model} "
                                     f"--base-url {server} --split test --episodes 2 --seed 0 --temperature 0 ")
    assert float(row["wall_eval_s"]) > 0 and row["sittings"] == "1" and all(row[v] for v in ("torch", "gymnasium"))
    curves = store.read_curves(sitting / "results" / "suite_smoke_curves")
    assert not [p for p in curves if p["algorithm"] == "micro"]  # no learning curve
    assert not rows_of(suite, sitting)["expert"]["model"]
    page = (sitting / "results" / "suite_smoke.md").read_text(encoding="utf-8")
    assert "Runs: 1 of the 6 the preset plans" in page and "Language-model rows: 1 " in page
    levels = (sitting / "results" / "suite_smoke_levels" / "customer_support.md").read_text(encoding="utf-8")
    assert f"| L0 | 1.00 / 1.00 | {float(row['test_success']):.2f} / - |" in levels  # no train success


def test_it_plays_the_test_episodes_of_the_trained_rows_final_evaluation(suite, sitting):
    episodes = store.read_family_files(sitting / "results" / "suite_smoke_episodes", "*.csv.gz")
    model = [e for e in episodes if e["algorithm"] == "micro"]
    expert = [e for e in episodes if e["algorithm"] == "expert" and e["split"] == "test"]
    assert [e["split"] for e in model] == ["test", "test"]
    assert [(e["task_id"], e["unit_id"]) for e in model] == [(e["task_id"], e["unit_id"]) for e in expert[:2]]
    row = rows_of(suite, sitting)["micro"]
    assert sum(int(e["success"]) for e in model) / 2 == pytest.approx(float(row["test_success"]))


def test_its_command_reproduces_its_episodes(suite, sitting, tmp_path, monkeypatch):
    row = rows_of(suite, sitting)["micro"]
    monkeypatch.chdir(tmp_path)
    assert agentgym(shlex.split(row["command"])[1:]) == 0
    lines = [json.loads(line) for line in (tmp_path / "runs" / "reproduce" / "CustomerSupport-L0-v1__micro.jsonl")
             .read_text().splitlines()[1:]]
    kept = [e for e in store.read_family_files(sitting / "results" / "suite_smoke_episodes", "*.csv.gz")
            if e["algorithm"] == "micro"]
    assert [(e["task_id"], int(bool(e["metrics"]["success"])), round(e["return"], 4), e["metrics"]["turns"]) for e in lines] \
        == [(e["task_id"], int(e["success"]), float(e["return"]), int(e["turns"])) for e in kept]


def test_an_interrupted_evaluation_resumes_and_changed_settings_run_it_again(suite, sitting, tmp_path, capsys,
                                                                            server, micro_model):
    for folder in ("results", "runs"):
        shutil.copytree(sitting / folder, tmp_path / folder)
    table = tmp_path / "results" / "suite_smoke.csv"
    first = rows_of(suite, sitting)["micro"]
    store.write_rows(table, store.FIELDS, [r for r in store.read_rows(table) if r["algorithm"] != "micro"])
    played = tmp_path / "runs" / "suite_smoke" / "llm" / "CustomerSupport-L0-v1__micro" / "episodes_test.jsonl"
    played.write_text("\n".join(played.read_text().splitlines()[:2]) + "\n")  # stopped after its first episode
    assert suite.main(arguments(tmp_path, micro_model, server, "--algos", "micro")) == 0
    resumed = rows_of(suite, tmp_path)["micro"]
    assert resumed["sittings"] == "2" and float(resumed["wall_eval_s"]) > float(first["wall_eval_s"])
    assert (resumed["test_success"], resumed["settings_hash"]) == (first["test_success"], first["settings_hash"])
    capsys.readouterr()
    assert suite.main(arguments(tmp_path, micro_model, server, "--algos", "micro")) == 0
    assert "evaluated only" not in capsys.readouterr().out  # unchanged: nothing to run
    assert suite.main(arguments(tmp_path, micro_model, server, "--algos", "micro", "--llm-max-tokens", "9")) == 0
    again = rows_of(suite, tmp_path)["micro"]
    assert again["settings_hash"] != first["settings_hash"] and again["sittings"] == "1"
    assert "--max-tokens 9" in again["command"]


def test_new_weights_in_the_same_directory_change_the_settings_hash(llm_rows, micro_model, tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(micro_model, copy)
    policy = llm_rows.LLMPolicy.parse(f"hf:{copy}")
    assert policy.label == "llm-model" and policy.identity().startswith(f"{copy} sha256:")
    args = argparse.Namespace(llm=[f"hf:{copy}"], llm_ids=["AgentGym/Math-v0"], llm_episodes=None, llm_max_tokens=256,
                              llm_concurrency=8)
    plan = importlib.import_module("benchmarks.suite_lib.plan")
    before = {c.env_id: c.settings_hash("cpu") for c in llm_rows.llm_cells(args, plan.PRESETS["quick"], ["math"])}
    assert list(before) == ["AgentGym/Math-L0-v1", "AgentGym/Math-v0"]
    with (copy / "config.json").open("a") as handle:
        handle.write("\n")
    after = {c.env_id: c.settings_hash("cpu") for c in llm_rows.llm_cells(args, plan.PRESETS["quick"], ["math"])}
    assert all(after[i] != before[i] for i in before)


def test_a_model_has_rows_on_every_familys_levels_the_team_included(llm_rows, micro_model):
    args = argparse.Namespace(llm=[f"hf:{micro_model}"], llm_ids=[], llm_episodes=3, llm_max_tokens=8, llm_concurrency=1)
    plan = importlib.import_module("benchmarks.suite_lib.plan")
    cells = llm_rows.llm_cells(args, plan.PRESETS["full"], ["tau2_telecom", "support_team", "tau2_retail"])
    assert {c.env for c in cells} == {"tau2_retail", "tau2_telecom", "support_team"} and len(cells) == 15
    assert {c.eval_episodes for c in cells} == {3}
    assert all("--source generated" in c.command("cpu") for c in cells if c.env == "tau2_retail")
    assert all("--source real --seeded" in c.command("cpu") for c in cells if c.env == "tau2_telecom")
    assert any(c.command("cpu").startswith("agentgym eval AgentGym/SupportTeam-L0-v1 --policy hf") for c in cells)


def test_a_model_plays_the_support_team_as_every_agent_in_turn(micro_model, tmp_path):
    output = tmp_path / "team.jsonl"
    assert agentgym(["eval", "AgentGym/SupportTeam-L0-v1", "--policy", "hf", "--model", str(micro_model), "--device", "cpu",
                     "--split", "test", "--episodes", "2", "--seed", "0", "--temperature", "0", "--max-tokens", "8",
                     "--concurrency", "2", "--no-store", "--output", str(output)]) == 0
    records = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    episodes = [record for record in records if "task" in record]  # after the file's config line
    assert len(episodes) == 2 and all(e["error"] is None and e["unit_id"] for e in episodes)


@pytest.mark.parametrize("spec, message", [
    ("hf:/no/such/model", "is not a model directory"),
    ("openai:gpt-4o-mini", "expected [NAME=]hf:PATH or [NAME=]openai:MODEL@BASE_URL"),
    ("vllm:model@http://127.0.0.1:8000/v1", "expected [NAME=]hf:PATH"),
])
def test_a_model_spec_that_does_not_parse_is_refused_clearly(suite, spec, message, capsys, tmp_path):
    assert suite.main(["--preset", "smoke", "--out", str(tmp_path), "--llm", spec]) == 2
    assert message in capsys.readouterr().err


def test_episodes_an_endpoint_error_ended_write_no_row(suite, tmp_path, free_port, capsys):
    down = f"down=openai:any-model@http://127.0.0.1:{free_port}/v1"  # nothing listens there
    argv = ["--preset", "smoke", "--out", str(tmp_path / "results"), "--runs", str(tmp_path / "runs"), "--llm", down,
            "--algos", "down", "--llm-episodes", "1", "--llm-max-tokens", "8"]
    assert suite.main(argv) == 1
    assert "1 episode(s) ended with an error of the model or its endpoint" in capsys.readouterr().err
    assert not store.read_rows(tmp_path / "results" / "suite_smoke.csv")


@pytest.mark.parametrize("models, ids, message", [
    (["openai:org-a/m@http://127.0.0.1:1/v1", "openai:org-b/m@http://127.0.0.1:2/v1"], [],
     "two models named llm-m: give each its own NAME="),
    (["ppo=openai:m@http://127.0.0.1:1/v1"], [], "ppo is an algorithm of the preset: give the model another NAME="),
    (["mine=openai:m@http://127.0.0.1:1/v1"], ["AgentGym/CustomerSupport-L0-v1"],
     "language-model rows asked for twice: [customer_support L0 mine, evaluated only]"),
    (["mine=openai:m@http://127.0.0.1:1/v1"], ["AgentGym/CustomerSupport-v0", "AgentGym/CustomerSupport-v0"],
     "asked for twice: [customer_support v0 mine, evaluated only]"),
])
def test_rows_that_would_share_a_key_are_refused_clearly(suite, models, ids, message, capsys, tmp_path):
    argv = ["--preset", "smoke", "--out", str(tmp_path), "--llm", *models, *(["--llm-ids", *ids] if ids else [])]
    assert suite.main(argv) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing ran


def test_the_settings_hash_covers_the_task_source_and_the_evaluation_seed(llm_rows, monkeypatch):
    import trainers.run

    args = argparse.Namespace(llm=["m=openai:m@http://127.0.0.1:1/v1"], llm_ids=[], llm_episodes=2, llm_max_tokens=8,
                              llm_concurrency=1)
    plan = importlib.import_module("benchmarks.suite_lib.plan")
    cell, = llm_rows.llm_cells(args, plan.PRESETS["quick"], ["tau2_telecom"])
    base = cell.settings_hash("cpu")
    assert cell.settings_hash("cuda") == base  # an endpoint's row does not depend on this machine's device
    monkeypatch.setitem(llm_rows.TASK_SOURCES, "tau2_telecom", ["--source", "real"])  # not --seeded
    unseeded = cell.settings_hash("cpu")
    monkeypatch.setattr(trainers.run, "EVAL_SEED", 1)
    assert len({base, unseeded, cell.settings_hash("cpu")}) == 3


def test_another_version_of_a_ladder_level_is_a_row_of_its_own_on_the_page(llm_rows, tmp_path):
    args = argparse.Namespace(llm=["m=openai:m@http://127.0.0.1:1/v1"], llm_ids=["AgentGym/CustomerSupport-L0-v0",
                              "AgentGym/CustomerSupport-v0"], llm_episodes=2, llm_max_tokens=8, llm_concurrency=1)
    plan = importlib.import_module("benchmarks.suite_lib.plan")
    cells = llm_rows.llm_cells(args, plan.PRESETS["smoke"], ["customer_support"])
    assert [(c.level, c.env_id) for c in cells] == [("L0", "AgentGym/CustomerSupport-L0-v1"),
                                                    ("L0-v0", "AgentGym/CustomerSupport-L0-v0"),
                                                    ("v0", "AgentGym/CustomerSupport-v0")]
    rows = [{**dict(zip(store.KEY, c.key)), "env_id": c.env_id, "budget": 0, "env_steps": 0, "train_success": "",
             "test_success": success, "test_return": success, "wall_train_s": 0.0, "wall_eval_s": 1.0, "sittings": 1,
             "settings_hash": c.settings_hash("cpu"), "commit": "abc", "command": c.command("cpu"), "model": "m @ x"}
            for c, success in zip(cells, (0.5, 1.0, 0.0))]
    episodes = [{**dict(zip(store.KEY, c.key)), "split": "test", "task_id": f"t{i}", "unit_id": f"t{i}",
                 "success": int(success > i / 2), "return": 0.0, "turns": 1, "invalid_calls": 0}
                for c, success in zip(cells, (0.5, 1.0, 0.0)) for i in range(2)]
    results = tmp_path / "results"
    store.write_rows(results / "suite_smoke.csv", store.FIELDS, rows)
    store.write_family_files(results / "suite_smoke_episodes", ".csv.gz", store.EPISODE_FIELDS, episodes)
    report = importlib.import_module("benchmarks.suite_report")
    page = report.report("smoke", results, reps=20).read_text(encoding="utf-8")
    levels = (results / "suite_smoke_levels" / "customer_support.md").read_text(encoding="utf-8")
    assert all(f"| {level} | {success:.2f} / - |" in levels for level, success in (("L0", 0.5), ("L0-v0", 1.0), ("v0", 0.0)))
    assert "| customer_support (3 levels) |" in page

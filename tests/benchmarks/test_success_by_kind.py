"""``benchmarks/success_by_kind.py`` on CustomerSupport: a run's final evaluation split by ticket
kind (the tau2 split, by reference write, is tested beside the tau2 data: tests/tau2)."""

from __future__ import annotations

from pathlib import Path

from trainers.lifecycle import TrainRequest, train


def reference_run(env_id: str, policy: str, root: Path) -> str:
    train(TrainRequest(env_id, algo=policy, total_steps=0, device="cpu", run_root=str(root), eval_episodes=1,
                       progress=False, record=False))
    return str(root / f"{env_id.split('/')[-1]}__{policy}__seed0")


def test_the_expert_solves_every_ticket_kind_of_the_level(benchmark_script, tmp_path):
    kinds = benchmark_script("success_by_kind")
    by_kind = kinds.success_by_kind(reference_run("AgentGym/CustomerSupport-L2-v0", "expert", tmp_path), "test", 20)
    assert set(by_kind) == {"password_reset", "billing_inquiry", "api_integration", "refund_request"}
    assert sum(played for _, played in by_kind.values()) == 20
    assert all(solved == played for solved, played in by_kind.values())


def test_an_env_without_task_kinds_is_a_clear_error(benchmark_script, tmp_path, capsys):
    kinds = benchmark_script("success_by_kind")
    assert kinds.main([reference_run("AgentGym/Math-v0", "random", tmp_path), "--episodes", "1"]) == 2
    assert "tasks have no kinds" in capsys.readouterr().err

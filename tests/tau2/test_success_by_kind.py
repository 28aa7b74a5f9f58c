"""``benchmarks/success_by_kind.py``: a run's final evaluation split by task kind."""

from __future__ import annotations

from pathlib import Path

from trainers.lifecycle import TrainRequest, train

AIRLINE_L1 = "AgentGym/Tau2Airline-L1-v0"


def reference_run(policy: str, data_dir: Path, root: Path) -> Path:
    request = TrainRequest(AIRLINE_L1, algo=policy, total_steps=0, device="cpu", run_root=str(root), eval_episodes=1,
                           progress=False, record=False, overrides={"env_kwargs": {"data_dir": str(data_dir)}})
    train(request)
    return root / f"Tau2Airline-L1-v0__{policy}__seed0"


def test_every_episode_has_a_kind_the_expert_solves_them_all_and_random_does_not(benchmark_script, data_dir, tmp_path):
    kinds = benchmark_script("success_by_kind")
    expert = kinds.success_by_kind(str(reference_run("expert", data_dir, tmp_path)), "test", 12)
    assert sum(played for _, played in expert.values()) == 12
    assert len(expert) >= 2 and set(expert) <= {"cancel_reservation", "update_reservation_baggages", "send_certificate"}
    assert all(solved == played for solved, played in expert.values())
    random = kinds.success_by_kind(str(reference_run("random", data_dir, tmp_path)), "test", 12)
    assert sum(solved for solved, _ in random.values()) < 12

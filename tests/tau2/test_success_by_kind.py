"""``benchmarks/success_by_kind.py``: a run's final evaluation split by task kind (its reference write
or transfer)."""

from __future__ import annotations


def test_every_episode_has_a_kind_the_expert_solves_them_all_and_random_does_not(benchmark_script, reference_run,
                                                                                  data_dir):
    kinds = benchmark_script("success_by_kind")
    expert = kinds.success_by_kind(reference_run("AgentGym/Tau2Airline-L1-v0", "expert", data_dir=str(data_dir)), "test", 12)
    assert sum(played for _, played in expert.values()) == 12
    assert len(expert) >= 2 and set(expert) <= {"cancel_reservation", "update_reservation_baggages", "send_certificate"}
    assert all(solved == played for solved, played in expert.values())
    random = kinds.success_by_kind(reference_run("AgentGym/Tau2Airline-L1-v0", "random", data_dir=str(data_dir)), "test", 12)
    assert sum(solved for solved, _ in random.values()) < 12


def test_a_telecom_task_for_a_human_agent_is_a_kind_of_its_own(benchmark_script, reference_run, telecom_dir):
    kinds = benchmark_script("success_by_kind")
    expert = kinds.success_by_kind(reference_run("AgentGym/Tau2Telecom-L2-v0", "expert", data_dir=str(telecom_dir)), "test", 20)
    assert {"transfer_to_human_agents", "no write"} <= set(expert)
    assert all(solved == played for solved, played in expert.values())

"""``benchmarks/success_by_kind.py`` on CustomerSupport and Math: a run's final evaluation split by
ticket kind or problem template (the tau2 split, by reference write, is tested beside the tau2
data: tests/tau2)."""

from __future__ import annotations


def test_the_expert_solves_every_ticket_kind_of_the_level(benchmark_script, reference_run):
    kinds = benchmark_script("success_by_kind")
    by_kind = kinds.success_by_kind(reference_run("AgentGym/CustomerSupport-L2-v0", "expert"), "test", 20)
    assert {kind.split(" (")[0] for kind in by_kind} == {"password_reset", "billing_inquiry", "api_integration", "refund_request"}
    assert sum(played for _, played in by_kind.values()) == 20
    assert all(solved == played for solved, played in by_kind.values())


def test_an_api_ticket_kind_names_the_failure_its_logs_show(benchmark_script, reference_run):
    kinds = benchmark_script("success_by_kind")
    by_kind = kinds.success_by_kind(reference_run("AgentGym/CustomerSupport-L2-v0", "expert"), "train", 60)
    assert {kind for kind in by_kind if kind.startswith("api_integration")} == {
        "api_integration (auth)", "api_integration (rate_limit)", "api_integration (server_error)"}


def test_a_math_problem_kind_is_its_difficulty_and_a_template_of_its_split(benchmark_script, reference_run):
    kinds = benchmark_script("success_by_kind")
    by_kind = kinds.success_by_kind(reference_run("AgentGym/Math-L2-v0", "expert"), "test", 30)
    assert {kind.split(" (")[0] for kind in by_kind} == {"easy", "medium"}
    assert all(kind.split(" (")[1].startswith("test-") for kind in by_kind)
    assert all(solved == played for solved, played in by_kind.values())


def test_an_env_without_task_kinds_is_a_clear_error(benchmark_script, reference_run, capsys):
    kinds = benchmark_script("success_by_kind")
    assert kinds.main([reference_run("AgentGym/Coding-L0-v0", "random"), "--episodes", "1"]) == 2
    assert "tasks have no kinds" in capsys.readouterr().err

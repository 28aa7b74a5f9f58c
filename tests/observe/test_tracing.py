"""Tracing: spans read back from a real OTLP receiver (a local Arize Phoenix started here), an
unreachable collector as a warning, and no opentelemetry import while tracing is off."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentgym_envs.observe import tracing
from agentgym_envs.observe.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
CS = "AgentGym/CustomerSupport-v1"


@pytest.fixture(autouse=True)
def patient_exporter(monkeypatch):
    """A loaded machine may keep Phoenix from answering an export within the default timeout."""
    monkeypatch.setattr(tracing, "EXPORT_TIMEOUT_S", 120.0)


def test_an_evaluation_traced_to_phoenix_has_run_episode_and_tool_spans(phoenix, tmp_path, capsys):
    from agentgym_envs.cli import main

    url, _ = phoenix
    store_path = tmp_path / "agentgym.db"
    assert main(["eval", "customer_support", "--policy", "expert", "--episodes", "2", "--store", str(store_path),
                 "--otlp-endpoint", f"{url}/v1/traces"]) == 0
    with RunStore(store_path) as store:
        run = store.runs()[0]
        episodes = store.episodes(run["id"])
    turns = sum(len(e["rewards"]) for e in episodes)
    spans = phoenix.spans(run["trace_id"], 1 + len(episodes) + turns)
    by_kind = {kind: [s for s in spans if s["span_kind"] == kind] for kind in ("CHAIN", "AGENT", "TOOL")}
    (run_span,) = by_kind["CHAIN"]
    assert run_span["context"]["span_id"] == run["span_id"] and run_span["attributes"]["agentgym.run.id"] == run["id"]
    assert sorted(s["context"]["span_id"] for s in by_kind["AGENT"]) == sorted(e["span_id"] for e in episodes)
    for episode in episodes:
        (span,) = [s for s in by_kind["AGENT"] if s["context"]["span_id"] == episode["span_id"]]
        attributes = span["attributes"]
        assert span["parent_id"] == run["span_id"]
        assert attributes["agentgym.env.id"] == CS and attributes["agentgym.task.id"] == episode["task_id"]
        assert attributes["agentgym.split"] == "test" and attributes["agentgym.seed"] == int(episode["task"])
        assert attributes["agentgym.episode.return"] == pytest.approx(episode["return"])
        assert attributes["agentgym.episode.success"] is True
        assert attributes["agentgym.episode.outcome_reason"] == episode["outcome_reason"]
        tools = sorted((s for s in by_kind["TOOL"] if s["parent_id"] == episode["span_id"]),
                       key=lambda s: s["attributes"]["agentgym.turn"])
        assert [s["attributes"]["agentgym.reward"] for s in tools] == pytest.approx(episode["rewards"])
        calls = [m["tool_calls"][0]["function"] for m in episode["messages"] if m.get("tool_calls")]
        assert [s["attributes"]["gen_ai.tool.name"] for s in tools] == [call["name"] for call in calls]
        assert [s["attributes"]["gen_ai.tool.call.arguments"] for s in tools] == [call["arguments"] for call in calls]
        assert {s["attributes"]["agentgym.tool.status"] for s in tools} == {"ok"}


def test_a_framework_stepping_the_env_itself_gets_tool_spans_over_grpc(phoenix):
    import gymnasium as gym

    url, grpc_port = phoenix
    assert tracing.configure(f"http://127.0.0.1:{grpc_port}", protocol="grpc")
    try:
        env = gym.make(CS, action_mode="text")
        with tracing.run_span("eval", {"agentgym.policy": "own loop"}) as span:
            trace_id, _ = tracing.span_ids(span)
            env.reset(seed=3)
            env.step('{"name": "no_such_tool", "arguments": {}}')  # an agent's own tool function, called badly
        env.close()  # ends the unfinished episode
    finally:
        tracing.shutdown()
    spans = phoenix.spans(trace_id, 3)
    (tool,) = [s for s in spans if s["span_kind"] == "TOOL"]
    (episode,) = [s for s in spans if s["span_kind"] == "AGENT"]
    assert tool["parent_id"] == episode["context"]["span_id"]
    assert tool["attributes"]["gen_ai.tool.name"] == "no_such_tool" and tool["status_code"] == "ERROR"
    assert episode["attributes"]["agentgym.episode.outcome_reason"] == "left unfinished"


def test_a_model_the_env_calls_during_a_step_nests_under_its_tool_call(phoenix, monkeypatch):
    import gymnasium as gym

    url, _ = phoenix
    env = gym.make(CS, action_mode="text")
    play = env.unwrapped._step

    def step_that_asks_a_simulated_user(action):
        with tracing.chat_span("simulated-user", "http://127.0.0.1:8000/v1", {}):
            return play(action)

    monkeypatch.setattr(env.unwrapped, "_step", step_that_asks_a_simulated_user)
    with tracing.session(f"{url}/v1/traces"), tracing.run_span("eval", {}) as span:
        trace_id, _ = tracing.span_ids(span)
        env.reset(seed=3)
        env.step('{"name": "no_such_tool", "arguments": {}}')
        env.close()
    spans = phoenix.spans(trace_id, 4)
    (tool,) = [s for s in spans if s["span_kind"] == "TOOL"]
    (llm,) = [s for s in spans if s["span_kind"] == "LLM"]
    assert llm["parent_id"] == tool["context"]["span_id"] and llm["context"]["trace_id"] == tool["context"]["trace_id"]


def test_an_episode_whose_metrics_hold_numpy_numbers_is_exported_with_them(phoenix, monkeypatch):
    import gymnasium as gym
    import numpy as np

    url, _ = phoenix
    env = gym.make(CS, action_mode="text")
    play = env.unwrapped._step

    def step_with_numpy_metrics(action):
        observation, reward, terminated, truncated, info = play(action)
        info["metrics"] = {"success": np.float32(0.0), "steps_left": np.int64(7)}
        return observation, reward, terminated, True, info

    monkeypatch.setattr(env.unwrapped, "_step", step_with_numpy_metrics)
    with tracing.session(f"{url}/v1/traces"), tracing.run_span("eval", {}) as span:
        trace_id, _ = tracing.span_ids(span)
        env.reset(seed=3)
        env.step('{"name": "no_such_tool", "arguments": {}}')
    spans = phoenix.spans(trace_id, 3)
    (episode,) = [s for s in spans if s["span_kind"] == "AGENT"]
    attributes = episode["attributes"]
    assert attributes["agentgym.metric.steps_left"] == 7.0 and attributes["agentgym.episode.success"] is False


def test_a_loop_stepping_faster_than_the_export_loses_no_span(phoenix, monkeypatch):
    import gymnasium as gym

    url, _ = phoenix
    from agentgym_envs.observe import export_process

    monkeypatch.setattr(export_process, "BATCH", 4)  # frames that fill the pipe to the exporter many times over
    env = gym.make(CS, action_mode="text")
    with tracing.session(f"{url}/v1/traces"), tracing.run_span("eval", {"agentgym.policy": "own loop"}) as span:
        trace_id, _ = tracing.span_ids(span)
        for step in range(300):
            if step % 10 == 0:
                env.reset(seed=step)
            env.step('{"name": "no_such_tool", "arguments": {}}')
    env.close()
    spans = phoenix.spans(trace_id, 331)
    assert sum(s["span_kind"] == "TOOL" for s in spans) == 300 and sum(s["span_kind"] == "AGENT" for s in spans) == 30


def test_an_episode_is_the_child_of_the_span_current_at_its_reset_and_else_a_trace_of_its_own(phoenix):
    import gymnasium as gym

    url, _ = phoenix
    env = gym.make(CS, action_mode="text")
    with tracing.session(f"{url}/v1/traces"):
        with tracing.run_span("eval", {}) as span:
            for seed in (1, 2):  # the second reset finds the same context as the first
                env.reset(seed=seed)
                assert tracing.episode_span_ids(env)[0] == tracing.span_ids(span)[0]
                assert tracing.episode_trace(env).parent_id == int(tracing.span_ids(span)[1], 16)
        traces = set()
        for seed in (3, 4):
            env.reset(seed=seed)
            assert tracing.episode_trace(env).parent_id == 0
            traces.add(tracing.episode_span_ids(env)[0])
        assert len(traces) == 2 and tracing.span_ids(span)[0] not in traces
        env.close()


def test_run_spans_after_the_same_random_seed_get_their_own_trace_and_leave_random_as_it_was(phoenix):
    import random

    url, _ = phoenix
    random.seed(0)
    untraced = [random.random() for _ in range(3)]
    traces = []
    with tracing.session(f"{url}/v1/traces"):
        for _ in range(2):  # as two runs seeded alike (SB3's set_random_seed seeds random)
            random.seed(0)
            with tracing.run_span("train", {}) as span:
                traces.append(tracing.span_ids(span)[0])
            assert [random.random() for _ in range(3)] == untraced
    assert traces[0] != traces[1]


def test_a_running_episode_hands_its_tool_calls_over_in_batches_and_at_flush(phoenix, monkeypatch):
    import gymnasium as gym

    from agentgym_envs.observe.records import tool_call_span_id

    url, _ = phoenix
    monkeypatch.setattr(tracing, "CALLS_HELD", 2)
    env = gym.make(CS, action_mode="text")
    with tracing.session(f"{url}/v1/traces"), tracing.run_span("eval", {}) as span:
        trace_id, _ = tracing.span_ids(span)
        env.reset(seed=4)
        for _ in range(5):
            env.step('{"name": "no_such_tool", "arguments": {}}')
        episode = tracing.episode_trace(env)
        assert episode.open and episode.sent == 4  # two batches of two handed over, the fifth call held
        assert tracing.flush()
        spans = phoenix.spans(trace_id, 5)  # the episode and the run are still open: their spans come later
        assert sorted(s["context"]["span_id"] for s in spans if s["span_kind"] == "TOOL") == sorted(
            format(tool_call_span_id(episode.span_id, number), "016x") for number in range(5))
        env.close()


def test_a_forked_process_exports_its_spans_through_an_exporter_of_its_own(phoenix):
    import gymnasium as gym

    url, _ = phoenix
    with tracing.session(f"{url}/v1/traces"), tracing.run_span("eval", {}) as span:
        trace_id, _ = tracing.span_ids(span)
        env = gym.make(CS, action_mode="text")
        env.reset(seed=1)
        pid = os.fork()  # the parent's pipe to its exporter must not carry the child's spans
        if pid == 0:
            try:
                env.reset(seed=2)
                env.step('{"name": "no_such_tool", "arguments": {}}')
                env.close()
                tracing.shutdown()
            finally:
                os._exit(0)
        env.step('{"name": "no_such_tool", "arguments": {}}')
        env.close()
        assert os.waitpid(pid, 0)[1] == 0
    spans = phoenix.spans(trace_id, 5)
    episodes = [s for s in spans if s["span_kind"] == "AGENT"]
    assert sorted(s["attributes"]["agentgym.seed"] for s in episodes if s["parent_id"] == tracing.span_ids(span)[1]) == [1, 2]
    assert sum(s["span_kind"] == "TOOL" for s in spans) == 2


def test_an_episode_open_when_the_process_exits_is_exported_as_unfinished(phoenix):
    url, _ = phoenix
    script = f"""
import gymnasium as gym
import agentgym_envs
from agentgym_envs.observe import tracing
tracing.configure("{url}/v1/traces")
env = gym.make("{CS}", action_mode="text")
with tracing.run_span("eval", {{}}) as span:
    print(tracing.span_ids(span)[0])
    env.reset(seed=5)
    env.step('{{"name": "no_such_tool", "arguments": {{}}}}')
"""  # exits mid-episode: no env.close(), no shutdown() of its own
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    spans = phoenix.spans(done.stdout.split()[-1], 3)
    (episode,) = [s for s in spans if s["span_kind"] == "AGENT"]
    (tool,) = [s for s in spans if s["span_kind"] == "TOOL"]
    assert episode["attributes"]["agentgym.episode.outcome_reason"] == "left unfinished"
    assert tool["parent_id"] == episode["context"]["span_id"]


def test_a_local_model_s_llm_calls_are_spans_under_their_episodes(phoenix, micro_model):
    from agentgym_envs.evaluation import ModelSpec, evaluate

    url, _ = phoenix
    assert tracing.configure(f"{url}/v1/traces")
    try:
        with tracing.run_span("eval", {}) as span:
            trace_id, _ = tracing.span_ids(span)
            evaluate(CS, ModelSpec("hf", str(micro_model), {"device": "cpu", "max_tokens": 48}), episodes=2, concurrency=2,
                     action_mode="text", max_turns=2)
    finally:
        tracing.shutdown()
    spans = phoenix.spans(trace_id, 4)
    episodes = {s["context"]["span_id"] for s in spans if s["span_kind"] == "AGENT"}
    llm = [s for s in spans if s["span_kind"] == "LLM"]
    assert len(episodes) == 2 and llm
    assert {s["parent_id"] for s in llm} == episodes  # each episode's calls under it, though generated as one batch
    for s in llm:
        assert s["attributes"]["gen_ai.request.model"] == str(micro_model)
        assert s["attributes"]["gen_ai.usage.input_tokens"] > 0 and s["attributes"]["gen_ai.usage.output_tokens"] > 0


def test_an_unreachable_collector_is_a_warning_and_the_run_goes_on(tmp_path, capsys, free_port):
    from agentgym_envs.cli import main

    port = free_port
    with pytest.warns(tracing.TracingWarning, match="no OTLP collector answers"):
        code = main(["eval", "customer_support", "--policy", "expert", "--episodes", "1", "--store", str(tmp_path / "s.db"),
                     "--otlp-endpoint", f"http://127.0.0.1:{port}/v1/traces"])
    assert code == 0 and not tracing.enabled()
    assert "success" in capsys.readouterr().out


def test_a_collector_that_takes_no_export_costs_the_run_its_spans_not_its_steps(monkeypatch, capfd):
    import gymnasium as gym

    monkeypatch.setattr(tracing, "EXPORT_TIMEOUT_S", 1.0)
    with socket.socket() as silent:  # accepts connections, answers nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        with tracing.session(f"http://127.0.0.1:{silent.getsockname()[1]}/v1/traces") as on:
            assert on
            env = gym.make(CS, action_mode="text")
            env.reset(seed=0)
            env.step('{"name": "no_such_tool", "arguments": {}}')
            assert not tracing.flush(timeout_s=60)
            env.step('{"name": "no_such_tool", "arguments": {}}')
            env.close()
    assert "did not take an export" in capfd.readouterr().err


def test_the_standard_variables_turn_tracing_on_and_a_bare_url_gets_the_traces_path(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    assert tracing.environment_endpoint("http/protobuf") == "http://127.0.0.1:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:9999/custom")
    assert tracing.environment_endpoint("http/protobuf") == "http://collector:9999/custom"
    with pytest.raises(ValueError, match="is a URL"):
        tracing.configure("127.0.0.1:4318")


def test_tracing_off_imports_no_opentelemetry():
    code = ("import sys, agentgym_envs\nfrom agentgym_envs.evaluation import evaluate\n"
            "evaluate('AgentGym/CustomerSupport-v1', 'expert', episodes=2)\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, check=True)
    assert out.stdout.strip() == "[]"


def test_an_endpoint_agent_s_chat_calls_are_spans_under_their_episodes(phoenix, server, micro_model):
    from agentgym_envs.evaluation import ModelSpec, evaluate

    url, _ = phoenix
    assert tracing.configure(f"{url}/v1/traces")
    try:
        with tracing.run_span("eval", {}) as span:
            trace_id, _ = tracing.span_ids(span)
            evaluate(CS, ModelSpec("openai", str(micro_model), {"base_url": server, "max_tokens": 48, "temperature": 0.0}),
                     episodes=2, concurrency=2, action_mode="text", max_turns=1)
    finally:
        tracing.shutdown()
    spans = phoenix.spans(trace_id, 5)
    episodes = {s["context"]["span_id"] for s in spans if s["span_kind"] == "AGENT"}
    llm = [s for s in spans if s["span_kind"] == "LLM"]
    assert len(episodes) == 2 and len(llm) == 2 and {s["parent_id"] for s in llm} == episodes
    for s in llm:
        attributes = s["attributes"]
        assert attributes["gen_ai.request.model"] == str(micro_model) and attributes["gen_ai.request.max_tokens"] == 48
        assert attributes["gen_ai.usage.input_tokens"] > 0 and attributes["server.address"] == "127.0.0.1"

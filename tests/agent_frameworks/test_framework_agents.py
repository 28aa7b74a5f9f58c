"""Agents built in LangChain, the OpenAI Agents SDK, Strands and Agno play agentgym envs in their
own loops, against a real ``transformers serve`` (``calling_server``: a model that writes tool
calls), and their model calls are traced under their episodes (read back from a real Phoenix)."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import gymnasium as gym
import pytest

from agentgym_envs.agent_frameworks import ENDED, Endpoint, EnvSession, run_agent
from agentgym_envs.agent_frameworks.runner import FRAMEWORKS, converse, resolve_factory
from agentgym_envs.cli import main
from agentgym_envs.core.runners import EpisodeSetup, EpisodeShard
from agentgym_envs.evaluation import ModelSpec
from agentgym_envs.observe import tracing
from agentgym_envs.observe.store import RunStore

MATH = "AgentGym/Math-v0"
DOCS = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"^```python\n(.*?)^```$", DOCS, re.DOTALL | re.MULTILINE)
MODULES = {"langchain": "langchain", "openai-agents": "agents", "strands": "strands", "agno": "agno"}


def needs(framework: str) -> None:
    pytest.importorskip(MODULES[framework])


def model_calls(trace: list[dict]) -> list[str]:
    """The tool calls the env saw, by name."""
    return [call["function"]["name"] for message in trace for call in message.get("tool_calls") or []]


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_docs_example_plays_an_episode_in_the_frameworks_own_loop(framework, calling_model, calling_server):
    needs(framework)
    [example] = [block for block in EXAMPLES if f"agentgym_envs.agent_frameworks.{FRAMEWORKS[framework]} import" in block]
    endpoint_line = 'MODEL, BASE_URL = "models/agentgym-tiny", "http://127.0.0.1:8000/v1"'
    assert endpoint_line in example
    namespace: dict = {}
    exec(compile(example.replace(endpoint_line, f"MODEL, BASE_URL = {str(calling_model)!r}, {calling_server!r}"),
                 "docs/agents.md", "exec"), namespace)
    episode = namespace["episode"]
    assert episode.error is None
    calls = model_calls(episode.trace)
    assert calls and calls[0] == "sum_1_to_n"  # the model's call reached the env
    assert episode.tool_calls == len(calls) == episode.metrics["turns"]
    assert episode.success == (episode.metrics["success"] == 1.0) and "score" in episode.metrics  # the env graded it


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_the_call_that_ends_the_episode_stops_the_frameworks_loop(framework, calling_model, calling_server):
    """With one turn allowed, the env truncates after the model's first call; the model would call
    ``submit_answer`` next if its framework asked it again."""
    needs(framework)
    calls = []

    def counted(session: EnvSession):
        run_call = session.call_tool
        session.call_tool = lambda name, arguments: calls.append((name, session.ended)) or run_call(name, arguments)
        return resolve_factory(framework)(session)

    endpoint = Endpoint(str(calling_model), calling_server, temperature=0.0, max_tokens=64)
    episode = run_agent(counted, "Math-v0", seed=0, split="train", endpoint=endpoint, max_turns=1)
    assert episode.error is None
    assert calls == [("sum_1_to_n", False)]
    assert episode.metrics["turns"] == 1 and not episode.success


def test_agentgym_eval_runs_a_module_factory_and_records_its_episodes(calling_model, calling_server, tmp_path, capsys):
    needs("openai-agents")
    output = tmp_path / "episodes.jsonl"
    status = main(["eval", "Math-v0", "--policy", "agentgym_envs.agent_frameworks.openai_agents:default_agent",
                   "--model", str(calling_model), "--base-url", calling_server, "--temperature", "0", "--max-tokens", "64",
                   "--episodes", "1", "--split", "train", "--max-turns", "2", "--output", str(output),
                   "--store", str(tmp_path / "runs.db")])
    assert status == 0
    config, record = [json.loads(line) for line in output.read_text().splitlines()]
    assert config["config"]["policy"]["name"] == "agentgym_envs.agent_frameworks.openai_agents:default_agent"
    assert record["error"] is None and record["metrics"]["turns"] >= 1
    assert "| agentgym_envs.agent_frameworks.openai_agents:default_agent |" in capsys.readouterr().out
    with RunStore(tmp_path / "runs.db") as store:
        [run] = store.runs()
        [episode] = store.episodes(run["id"])
    assert episode["split"] == "train" and episode["error"] is None
    assert any(message.get("tool_calls") for message in episode["messages"])  # the framework's call, as the env saw it


@pytest.fixture
def counting_proxy(calling_server):
    """A proxy in front of ``calling_server`` that counts the chat-completions requests it
    forwards, whatever client sends them; its ``/v1`` URL and the requests' paths."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    target = urlsplit(calling_server)
    seen: list[str] = []

    class Forward(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path.endswith("/chat/completions"):
                seen.append(self.path)
            request = urllib.request.Request(f"{target.scheme}://{target.netloc}{self.path}", data=body, method="POST",
                                             headers={"Content-Type": self.headers.get("Content-Type") or "text/plain"})
            try:
                with urllib.request.urlopen(request, timeout=300) as response:
                    status, kind, data = response.status, response.headers.get("Content-Type"), response.read()
            except urllib.error.HTTPError as error:
                status, kind, data = error.code, error.headers.get("Content-Type"), error.read()
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{proxy.server_port}{target.path}", seen
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join()


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_each_model_call_of_a_framework_agent_is_a_chat_span_under_its_episode(framework, calling_model, counting_proxy,
                                                                               phoenix, tmp_path):
    """``agentgym eval --policy FRAMEWORK --otlp-endpoint``, two episodes at once: the framework's
    own hook reports each request its client sent to the server as a ``chat`` span, a child of
    its episode's span, itself a child of the run's."""
    needs(framework)
    base_url, requests = counting_proxy
    store_path = tmp_path / "runs.db"
    assert main(["eval", "Math-v0", "--policy", framework, "--model", str(calling_model), "--base-url", base_url,
                 "--temperature", "0", "--max-tokens", "64", "--episodes", "1", "--trials", "2", "--concurrency", "2",
                 "--split", "train", "--max-turns", "2", "--output", str(tmp_path / "episodes.jsonl"),
                 "--store", str(store_path), "--otlp-endpoint", f"{phoenix.url}/v1/traces"]) == 0
    with RunStore(store_path) as store:
        [run] = store.runs()
        episodes = store.episodes(run["id"])
    assert len(episodes) == 2 and requests and all(episode["error"] is None for episode in episodes)
    turns = {episode["span_id"]: int(episode["metrics"]["turns"]) for episode in episodes}
    spans = phoenix.spans(run["trace_id"], 1 + len(turns) + sum(turns.values()) + len(requests))
    assert sorted(span["context"]["span_id"] for span in spans if span["span_kind"] == "AGENT") == sorted(turns)
    assert {span["parent_id"] for span in spans if span["span_kind"] == "AGENT"} == {run["span_id"]}
    tools = Counter(span["parent_id"] for span in spans if span["span_kind"] == "TOOL")
    assert tools == turns
    chats = [span for span in spans if span["span_kind"] == "LLM"]
    assert len(chats) == len(requests)  # one span per request the server got
    assert set(Counter(span["parent_id"] for span in chats)) == set(turns)  # each under its own episode
    for span in chats:
        attributes = span["attributes"]
        assert span["name"] == f"chat {calling_model}"
        assert attributes["gen_ai.operation.name"] == "chat" and attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"] == attributes["llm.model_name"] == str(calling_model)
        assert attributes["gen_ai.request.max_tokens"] == 64 and attributes["gen_ai.request.temperature"] == 0
        assert attributes["gen_ai.usage.input_tokens"] > 0 and attributes["gen_ai.usage.output_tokens"] > 0
        assert attributes["llm.token_count.total"] == (attributes["gen_ai.usage.input_tokens"]
                                                       + attributes["gen_ai.usage.output_tokens"])
        assert span["status_code"] != "ERROR"


@pytest.mark.parametrize("framework", ["langchain", "strands"])
def test_a_model_call_that_fails_is_an_error_chat_span_under_its_episode(framework, phoenix, free_port):
    """LangChain's and Strands' hooks report a failed call too (the SDK's and Agno's only the answered ones)."""
    needs(framework)
    endpoint = Endpoint("m", f"http://127.0.0.1:{free_port}/v1", max_retries=0, timeout=5)
    with tracing.session(f"{phoenix.url}/v1/traces"), tracing.run_span("eval", {}) as span:
        trace_id, _ = tracing.span_ids(span)
        episode = run_agent(framework, "Math-v0", seed=0, endpoint=endpoint)
    assert episode.error
    spans = phoenix.spans(trace_id, 3)
    [episode_span] = [span for span in spans if span["span_kind"] == "AGENT"]
    [chat] = [span for span in spans if span["span_kind"] == "LLM"]
    assert chat["parent_id"] == episode_span["context"]["span_id"] and chat["name"] == "chat m"
    assert chat["status_code"] == "ERROR" and chat["attributes"]["gen_ai.request.model"] == "m"


def test_a_ray_workers_shard_plays_framework_episodes(calling_model, calling_server):
    """What each Ray worker of ``evaluate(..., num_workers=N)`` runs, here in-process."""
    needs("langchain")
    spec = ModelSpec("langchain", str(calling_model), {"base_url": calling_server, "temperature": 0.0, "max_tokens": 64})
    setup = EpisodeSetup(MATH, "train", 0, 1, {"action_mode": "text", "max_turns": 2})
    [record] = [row.result() for row in EpisodeShard(spec, setup)([(0, 0)])]
    assert record["error"] is None and record["metrics"]["turns"] >= 1 and (record["task"], record["trial"]) == (0, 0)


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_an_unreachable_endpoint_ends_the_episode_with_a_recorded_error(framework, free_port):
    needs(framework)
    endpoint = Endpoint("m", f"http://127.0.0.1:{free_port}/v1", max_retries=0, timeout=5)
    episode = run_agent(framework, "Math-v0", seed=0, endpoint=endpoint)
    assert episode.error and not episode.success and episode.metrics == {"success": 0.0}
    assert episode.tool_calls == 0 and [m["role"] for m in episode.trace] == ["system", "user"]


def test_a_tool_call_steps_the_env_and_returns_its_result_until_the_episode_ends():
    env = gym.make(MATH, action_mode="text", split="train", max_turns=2)
    session = EnvSession(env, seed=0)
    assert session.instructions.startswith("You are solving a math problem") and "PROBLEM" in session.task
    assert session.call_tool("sum_1_to_n", {"n": 4}) == "1 + 2 + ... + 4 = 10"
    assert session.call_tool("sum_1_to_n", '{"n": ').startswith("Error:")  # the env judges bad arguments
    assert session.ended and session.truncated and session.tool_calls == 2
    assert session.call_tool("submit_answer", {"value": 10}) == ENDED and session.info["turn"] == 2
    episode = session.result()
    assert model_calls(episode.trace) == ["sum_1_to_n"]  # the second is no call the env could read
    assert episode.metrics["turns"] == 2 and episode.metrics["invalid_calls"] == 1


def test_a_structured_env_is_refused():
    with pytest.raises(ValueError, match="text mode"):
        EnvSession(gym.make(MATH))


def test_an_unknown_agent_or_factory_is_a_clear_error(capsys):
    with pytest.raises(ValueError, match="give one of"):
        resolve_factory("autogen")
    with pytest.raises(ValueError, match="cannot load the agent factory 'no_such_module:make'"):
        resolve_factory("no_such_module:make")
    with pytest.raises(TypeError, match="not an agent of"):
        run_agent(lambda session: object(), "math", seed=0)
    assert main(["eval", "Math-v0", "--policy", "no_such_module:make", "--model", "m"]) == 2
    assert "agentgym: error: cannot load the agent factory" in capsys.readouterr().err


def test_an_answer_without_a_tool_call_is_an_env_turn_and_the_reply_continues_the_conversation():
    """:func:`converse`, the loop every framework's ``play`` runs, with scripted answers in
    place of a framework: text is judged by the env (a call written in it runs) until the end."""
    session = EnvSession(gym.make(MATH, action_mode="text", split="train"), seed=0)
    answers = iter(["Let me think.", '{"name": "sum_1_to_n", "arguments": {"n": 14}}',
                    '{"name": "submit_answer", "arguments": {"value": 105}}'])
    asked = []

    def ask(message: str) -> str:
        asked.append(message)
        return next(answers)

    converse(ask, session)
    assert asked[0] == session.task and asked[1].startswith("Error: no tool call found")
    assert asked[2] == "1 + 2 + ... + 14 = 105"
    assert session.terminated and session.result().success and session.tool_calls == 0

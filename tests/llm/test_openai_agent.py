"""The endpoint agent against a real OpenAI-compatible server (``server`` in tests/conftest.py:
``transformers serve`` on 127.0.0.1 serving the locally built micro model; real HTTP, real
generation), plus an endpoint that is down, one that hangs and one that fails."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

import gymnasium as gym
import pytest

from agentgym_envs.core.parsing import parse_tool_call
from agentgym_envs.evaluation import OpenAIChatAgent, TransformersAgent, evaluate
from agentgym_envs.inference import ChatClient, EndpointError

pytest.importorskip("openai")
MATH = "AgentGym/Math-v0"


def test_agent_plays_episodes_through_a_real_server(server, micro_model):
    agent = OpenAIChatAgent(str(micro_model), server, concurrency=2, max_tokens=8, timeout=60)
    summary = evaluate(MATH, agent, episodes=2, concurrency=2, action_mode="text", max_turns=2)
    assert summary["errors"] == 0 and summary["episodes"] == 2
    assert 1 <= summary["turns"] <= 2
    assert summary["llm_prompt_tokens"] > 0
    assert 0 < summary["llm_completion_tokens"] <= 8 * summary["turns"]
    agent.close()


def test_server_usage_counts_the_prompt_the_local_agent_renders(server, micro_model):
    env = gym.make(MATH, action_mode="text")
    _, info = env.reset(seed=0)
    tools = env.unwrapped.tool_schemas
    reply = ChatClient(str(micro_model), server, max_retries=0, request_options={"max_tokens": 4}).chat(info["messages"], tools)
    local_ids, cut = TransformersAgent(str(micro_model), max_new_tokens=4).prompt_ids(info["messages"], tools)
    assert not cut and reply.prompt_tokens == len(local_ids)
    assert 1 <= reply.completion_tokens <= 4 and reply.message["role"] == "assistant"


def test_a_rejected_request_fails_at_once_with_the_servers_reason(server):
    client = ChatClient("some-other-model", server, max_retries=3, backoff=5)
    start = time.monotonic()
    with pytest.raises(EndpointError, match="rejected the request, HTTP 400.*pinned"):
        client.chat([{"role": "user", "content": "hi"}])
    assert time.monotonic() - start < 5  # not retried


def test_an_unreachable_endpoint_ends_each_episode_with_a_recorded_error(tmp_path, free_port):
    agent = OpenAIChatAgent("m", f"http://127.0.0.1:{free_port}/v1", max_retries=1, backoff=0.01)
    path = tmp_path / "episodes.jsonl"
    summary = evaluate(MATH, agent, episodes=2, action_mode="text", output=str(path))
    assert summary["errors"] == 2 and summary["success"] == 0.0
    records = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert all("unreachable" in r["error"] and "after 2 attempts" in r["error"] for r in records)


def test_a_hung_endpoint_times_out_and_is_retried():
    with socket.socket() as hung:  # accepts connections, never answers
        hung.bind(("127.0.0.1", 0))
        hung.listen(8)
        client = ChatClient("m", f"http://127.0.0.1:{hung.getsockname()[1]}/v1", timeout=0.3, max_retries=1, backoff=0.1)
        start = time.monotonic()
        with pytest.raises(EndpointError, match=r"timed out after 0.3 s \(after 2 attempts\)"):
            client.chat([{"role": "user", "content": "hi"}])
        assert time.monotonic() - start >= 0.7


def test_server_errors_are_retried_with_exponential_backoff():
    requests = []

    class Unavailable(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            requests.append(time.monotonic())
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b'{"error": {"message": "overloaded"}}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        client = ChatClient("m", f"http://127.0.0.1:{httpd.server_port}/v1", max_retries=2, backoff=0.1)
        with pytest.raises(EndpointError, match="HTTP 503: overloaded .after 3 attempts"):
            client.chat([{"role": "user", "content": "hi"}])
    finally:
        httpd.shutdown()
        httpd.server_close()
    gaps = [later - earlier for earlier, later in zip(requests, requests[1:])]
    assert len(requests) == 3 and gaps[0] >= 0.1 and gaps[1] >= 0.2


def test_an_assistant_message_with_tool_calls_is_a_call_the_env_parses_as_it_is():
    message = {"role": "assistant", "content": None,
               "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "sum_1_to_n", "arguments": '{"n": 4}'}}]}
    call = parse_tool_call(message)
    assert (call.name, call.arguments) == ("sum_1_to_n", {"n": 4})
    call = parse_tool_call({"role": "assistant", "content": '<tool_call>{"name": "x", "arguments": {}}</tool_call>'})
    assert (call.name, call.arguments) == ("x", {})

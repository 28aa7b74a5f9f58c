"""Bad input gets a clear 4xx answer (HTTP) or an error message with OpenEnv's code (WebSocket),
never a 500 or a dead server; the session cap refuses the next session; idle sessions are
reclaimed; a step that overruns the step timeout is abandoned."""

from __future__ import annotations

import json
from http.client import HTTPConnection
from urllib.parse import urlsplit

import pytest
from websockets.sync.client import connect

from agentgym_envs.external_trainers.openenv.app import build_app
from agentgym_envs.external_trainers.openenv.client import CapacityReached, RemoteEnv, RemoteEnvError, ws_url
from agentgym_envs.external_trainers.openenv.local import (
    active_sessions,
    http,
    serve_in_thread,
    thread_server,
    wait_until,
)

SUBMIT = '{"name": "submit_answer", "arguments": {"value": 1}}'


def announce_body(base: str, path: str, length: int) -> tuple[int, dict]:
    """Send the headers of a ``length``-byte request and read the answer (given before any body)."""
    host, port = urlsplit(base).hostname, urlsplit(base).port
    connection = HTTPConnection(host, port, timeout=10)
    try:
        connection.putrequest("POST", path)
        connection.putheader("content-type", "application/json")
        connection.putheader("content-length", str(length))
        connection.endheaders()
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def open_session(base: str) -> str:
    status, answer = http(base, "/sessions", {})
    assert status == 201, answer
    return answer["session_id"]


@pytest.fixture
def session(math_server):
    session_id = open_session(math_server)
    yield session_id
    http(math_server, f"/sessions/{session_id}", method="DELETE")


def assert_alive(base: str) -> None:
    assert http(base, "/health") == (200, {"status": "healthy"})


def test_health_and_schema_describe_the_env(math_server):
    assert_alive(math_server)
    status, schema = http(math_server, "/schema")
    assert status == 200
    assert {"text", "tool_call"} <= set(schema["action"]["properties"])
    assert {"messages", "tool_schemas", "metrics"} <= set(schema["observation"]["properties"])
    status, opening = http(math_server, "/reset", {"seed": 0})  # OpenEnv's stateless reset
    assert status == 200 and opening["observation"]["tool_schemas"] and not opening["done"]


def test_malformed_json_is_422(math_server, session):
    status, answer = http(math_server, f"/sessions/{session}/step", raw=b'{"action": {"text": ')
    assert status == 422, answer
    status, answer = http(math_server, f"/sessions/{session}/reset", raw=b"[[[")
    assert status == 422, answer
    assert_alive(math_server)


def test_malformed_json_over_the_websocket_is_an_error_and_the_session_goes_on(math_server):
    with connect(ws_url(math_server)) as ws:
        ws.send("{not json")
        answer = json.loads(ws.recv(10))
        assert answer["type"] == "error" and answer["data"]["code"] == "INVALID_JSON"
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(10))["type"] == "observation"


def test_unknown_session_is_404(math_server):
    for method, path, body in (("POST", "/sessions/nope/reset", {}), ("POST", "/sessions/nope/step",
                               {"action": {"text": SUBMIT}}), ("DELETE", "/sessions/nope", None),
                               ("GET", "/sessions/nope/state", None)):
        status, answer = http(math_server, path, body, method=method)
        assert status == 404 and answer["code"] == "UNKNOWN_SESSION", (path, answer)


def test_attaching_a_websocket_to_an_unknown_session_is_an_error(math_server):
    with connect(ws_url(math_server) + "?session_id=nope") as ws:
        answer = json.loads(ws.recv(10))
    assert answer["type"] == "error" and "Unknown session_id" in answer["data"]["message"]
    assert_alive(math_server)


def test_step_before_reset_and_after_the_end_is_409(math_server, session):
    status, answer = http(math_server, f"/sessions/{session}/step", {"action": {"text": SUBMIT}})
    assert status == 409 and answer["code"] == "EPISODE_NOT_STARTED"
    assert http(math_server, f"/sessions/{session}/reset", {"seed": 0})[0] == 200
    status, answer = http(math_server, f"/sessions/{session}/step", {"action": {"text": SUBMIT}})
    assert status == 200 and answer["done"] is True
    status, answer = http(math_server, f"/sessions/{session}/step", {"action": {"text": SUBMIT}})
    assert status == 409 and answer["code"] == "EPISODE_ENDED" and "reset" in answer["detail"]
    status, answer = http(math_server, "/step", {"action": {"text": SUBMIT}})  # OpenEnv's stateless step
    assert status == 409 and answer["code"] == "EPISODE_NOT_STARTED"


def test_step_after_the_end_over_the_websocket_is_an_error(math_server):
    with RemoteEnv(math_server) as env:
        env.reset(seed=0)
        assert env.step(SUBMIT)[2] is True
        with pytest.raises(RemoteEnvError, match="EXECUTION_ERROR: the episode has ended"):
            env.step(SUBMIT)
        env.reset(seed=1)  # the session goes on


def test_oversized_action_and_body_are_refused(math_server, session):
    http(math_server, f"/sessions/{session}/reset", {"seed": 0})
    status, answer = http(math_server, f"/sessions/{session}/step", {"action": {"text": "x" * 70_000}})
    assert status == 422 and "at most 65536" in json.dumps(answer)
    status, answer = announce_body(math_server, f"/sessions/{session}/step", 2 << 20)
    assert status == 413 and answer["code"] == "BODY_TOO_LARGE"
    with RemoteEnv(math_server) as env:
        env.reset(seed=0)
        with pytest.raises(RemoteEnvError, match="VALIDATION_ERROR"):
            env.step("x" * 70_000)
        assert env.step(SUBMIT)[2] is True
    assert_alive(math_server)


@pytest.mark.parametrize("body", [
    {"action": {"text": 5}},
    {"action": {"text": "a", "tool_call": {"name": "submit_answer", "arguments": {}}}},
    {"action": {}},
    {"action": {"tool_call": {"name": "submit_answer", "arguments": [1]}}},
    {"action": {"speak": "hello"}},
    {"action": "submit"},
    {},
])
def test_a_wrong_action_type_is_422(math_server, session, body):
    http(math_server, f"/sessions/{session}/reset", {"seed": 0})
    status, answer = http(math_server, f"/sessions/{session}/step", body)
    assert status == 422, answer


@pytest.mark.parametrize("body,status", [({"seed": "zero"}, 422), ({"seed": -1}, 422), ({"task_id": 7}, 400),
                                         ({"task_id": "no-such-task"}, 400), ({"split": "nope"}, 400),
                                         ({"colour": "red"}, 400)])
def test_a_wrong_reset_is_4xx(math_server, session, body, status):
    got, answer = http(math_server, f"/sessions/{session}/reset", body)
    assert got == status, answer
    assert answer["detail"]
    assert http(math_server, f"/sessions/{session}/reset", {"seed": 0})[0] == 200  # the session survives


def test_a_session_over_the_cap_is_refused_with_openenvs_capacity_error(math_server):
    envs = [RemoteEnv(math_server) for _ in range(3)]
    try:
        for env in envs:
            env.reset(seed=0)
        with pytest.raises(CapacityReached, match="CAPACITY_REACHED"):
            RemoteEnv(math_server).reset(seed=0)
        status, answer = http(math_server, "/sessions", {})
        assert status == 503 and answer["code"] == "CAPACITY_REACHED" and answer["max_sessions"] == 3
    finally:
        for env in envs:
            env.close()
    assert wait_until(lambda: active_sessions(math_server) == 0, 5)
    RemoteEnv(math_server).close()  # room again


def test_an_idle_http_session_is_reclaimed(math_server):
    session_id = open_session(math_server)
    http(math_server, f"/sessions/{session_id}/reset", {"seed": 0})
    assert active_sessions(math_server) >= 1
    assert wait_until(lambda: active_sessions(math_server) == 0, 6)  # idle timeout 2 s
    status, answer = http(math_server, f"/sessions/{session_id}/step", {"action": {"text": SUBMIT}})
    assert status == 404 and answer["code"] == "UNKNOWN_SESSION"


def test_a_step_over_the_step_timeout_is_abandoned_with_504():
    from agentgym_envs.scenarios.coding import SandboxLimits

    sleeper = json.dumps({"name": "run_tests", "arguments": {"program": "import time\ntime.sleep(30)"}})
    with thread_server("coding", make_kwargs={"limits": SandboxLimits(cpu_time_s=1, wall_time_s=1.5),
                                              "cache_results": False}, step_timeout_s=0.3) as base:
        session_id = open_session(base)
        assert http(base, f"/sessions/{session_id}/reset", {"seed": 0})[0] == 200
        status, answer = http(base, f"/sessions/{session_id}/step", {"action": {"text": sleeper}})
        assert status == 504 and answer["code"] == "STEP_TIMEOUT"
        status, answer = http(base, f"/sessions/{session_id}/step", {"action": {"text": sleeper}})
        assert status == 409 and answer["code"] == "SESSION_BROKEN"
        assert http(base, f"/sessions/{session_id}", method="DELETE")[0] == 200
        assert active_sessions(base) == 0
        assert_alive(base)


def test_shutting_down_closes_the_sessions_left_open():
    app = build_app("math")
    with serve_in_thread(app) as base:
        session_id = open_session(base)
        http(base, f"/sessions/{session_id}/reset", {"seed": 0})
        env = app.state.sessions.get(session_id)
        assert not env.closed
    assert env.closed and app.state.sessions.active == 0

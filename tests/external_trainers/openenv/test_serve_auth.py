"""A server with a token refuses requests without it (HTTP 401, a refused WebSocket handshake)
before anything runs; the right token works from every client; a non-loopback bind without a
token is refused unless ``--insecure``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from agentgym_envs.external_trainers.openenv.auth import TOKEN_ENV, InsecureBind, check_bind, is_loopback
from agentgym_envs.external_trainers.openenv.client import RemoteEnv, Unauthorized, tool_schemas, ws_url
from agentgym_envs.external_trainers.openenv.local import ROOT, free_port, http, thread_server
from agentgym_envs.external_trainers.openenv.models import AgentGymAction
from agentgym_envs.external_trainers.openenv.openenv_client import AgentGymEnvClient

TOKEN = "a-long-random-token"
GOOD = {"Authorization": f"Bearer {TOKEN}"}
BAD_HEADERS = {"none": {}, "wrong": {"Authorization": "Bearer not-the-token"},
               "prefix": {"Authorization": f"Bearer {TOKEN[:-1]}"}, "no scheme": {"Authorization": TOKEN}}
SUM = '{"name": "sum_1_to_n", "arguments": {"n": 3}}'


@pytest.fixture(scope="module")
def guarded():
    with thread_server("math", token=TOKEN, max_sessions=2, idle_timeout_s=60.0) as base:
        yield base


@pytest.fixture(autouse=True)
def no_token_in_the_environment(monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def sessions_open(base: str) -> int:
    return http(base, "/sessions", headers=GOOD)[1]["active_sessions"]


@pytest.mark.parametrize("headers", BAD_HEADERS.values(), ids=BAD_HEADERS)
def test_http_without_the_right_token_is_401_and_opens_nothing(guarded, headers):
    for method, path, body in (("POST", "/sessions", {}), ("POST", "/reset", {"seed": 0}), ("GET", "/schema", None),
                               ("GET", "/sessions", None), ("POST", "/step", {"action": {"text": SUM}})):
        status, answer = http(guarded, path, body, method=method, headers=headers)
        assert (status, answer["code"]) == (401, "UNAUTHORIZED"), path
    assert sessions_open(guarded) == 0


def test_a_step_without_the_right_token_does_not_run(guarded):
    status, opened = http(guarded, "/sessions", {}, headers=GOOD)
    assert status == 201
    session = f"/sessions/{opened['session_id']}"
    assert http(guarded, f"{session}/reset", {"seed": 0}, headers=GOOD)[0] == 200
    for headers in BAD_HEADERS.values():
        assert http(guarded, f"{session}/step", {"action": {"text": SUM}}, headers=headers)[0] == 401
        assert http(guarded, session, method="DELETE", headers=headers)[0] == 401
    assert http(guarded, f"{session}/state", headers=GOOD)[1]["step_count"] == 0
    assert http(guarded, f"{session}/step", {"action": {"text": SUM}}, headers=GOOD)[0] == 200
    assert http(guarded, f"{session}/state", headers=GOOD)[1]["step_count"] == 1
    assert http(guarded, session, method="DELETE", headers=GOOD)[0] == 200


@pytest.mark.parametrize("headers", BAD_HEADERS.values(), ids=BAD_HEADERS)
def test_a_websocket_without_the_right_token_is_refused_before_a_session_opens(guarded, headers):
    with pytest.raises(InvalidStatus) as refused:
        connect(ws_url(guarded), additional_headers=headers)
    assert refused.value.response.status_code == 401
    assert sessions_open(guarded) == 0


def test_every_client_without_the_token_is_refused(guarded):
    with pytest.raises(Unauthorized):
        RemoteEnv(guarded)
    with pytest.raises(Unauthorized):
        RemoteEnv(guarded, token="not-the-token")
    with pytest.raises(ConnectionError, match="401"), AgentGymEnvClient(base_url=guarded).sync() as client:
        client.reset(seed=0)
    with pytest.raises(OSError, match="401"):
        tool_schemas(guarded)
    assert sessions_open(guarded) == 0


def test_the_right_token_works_from_every_client(guarded, monkeypatch):
    assert tool_schemas(guarded, TOKEN)
    with RemoteEnv(guarded, token=TOKEN) as env:
        env.reset(seed=0)
        assert env.step(SUM)[4]["valid"]
    with AgentGymEnvClient(base_url=guarded, token=TOKEN).sync() as client:
        assert client.reset(seed=0).observation.tool_schemas
        assert client.step(AgentGymAction(text=SUM)).observation.info["valid"]
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # the clients' default
    with RemoteEnv(guarded) as env, AgentGymEnvClient(base_url=guarded).sync() as client:
        env.reset(seed=1)
        client.reset(seed=1)
        assert sessions_open(guarded) == 2


def test_health_answers_without_a_token(guarded):
    assert http(guarded, "/health") == (200, {"status": "healthy"})


def test_loopback_addresses_are_told_from_the_others():
    assert all(map(is_loopback, ["127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "10.1.2.3", "192.168.0.7", "example.org"]))


def test_a_non_loopback_bind_needs_a_token_or_insecure():
    for host in ("0.0.0.0", "::", "10.1.2.3", "example.org"):
        with pytest.raises(InsecureBind, match="--insecure"):
            check_bind(host, None, insecure=False)
        with pytest.raises(InsecureBind):
            check_bind(host, "", insecure=False)
        check_bind(host, TOKEN, insecure=False)
        check_bind(host, None, insecure=True)
    check_bind("127.0.0.1", None, insecure=False)


def test_the_command_line_refuses_a_non_loopback_bind_without_a_token():
    environment = {k: v for k, v in os.environ.items() if k != TOKEN_ENV} | {"PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "agentgym_envs.external_trainers.openenv", "math", "--host", "0.0.0.0", "--port", str(free_port())]
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "without a token" in done.stderr and "--insecure" in done.stderr


def test_a_guarded_server_process_takes_its_token_from_the_environment(server_process, monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # the child inherits it
    server = server_process("math", None, "--max-sessions", "1")
    monkeypatch.delenv(TOKEN_ENV)
    assert http(server.base, "/sessions")[0] == 401
    with RemoteEnv(server.base, token=TOKEN) as env:
        assert env.reset(seed=0)[1]["task_id"]
    assert http(server.base, "/sessions", headers=GOOD)[0] == 200

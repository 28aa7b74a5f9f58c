"""Faults: a client killed (or frozen) mid-episode frees its session; a server killed and
restarted serves new sessions; the Coding sandbox is as isolated served as in process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit

import gymnasium as gym
import pytest

import agentgym_envs
from agentgym_envs.external_trainers.openenv.client import RemoteEnv, RemoteEnvError
from agentgym_envs.external_trainers.openenv.local import ROOT, active_sessions, free_port, thread_server, wait_until

SUBMIT = '{"name": "submit_answer", "arguments": {"value": 1}}'
CLIENT = textwrap.dedent("""
    import sys, time
    from agentgym_envs.external_trainers.openenv.client import RemoteEnv
    env = RemoteEnv(sys.argv[1])
    env.reset(seed=0)
    env.step('{"name": "sum_1_to_n", "arguments": {"n": 3}}')
    print("mid-episode", flush=True)
    time.sleep(600)
""")


def client_process(base: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", CLIENT, base], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                               env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert process.stdout is not None and process.stdout.readline().strip() == "mid-episode"
    return process


@pytest.mark.parametrize("fault", ["killed", "frozen"])
def test_a_client_that_vanishes_mid_episode_frees_its_session(math_server, fault):
    assert wait_until(lambda: active_sessions(math_server) == 0, 5)
    process = client_process(math_server)
    try:
        assert active_sessions(math_server) == 1
        # killed: the kernel closes its socket; frozen: the socket stays open and silent, the idle timeout (2 s) acts
        process.send_signal(signal.SIGKILL if fault == "killed" else signal.SIGSTOP)
        assert wait_until(lambda: active_sessions(math_server) == 0, 2.0 + 2.0)
    finally:
        process.kill()
        process.wait(10)
        process.stdout.close()
    with RemoteEnv(math_server) as env:  # the server goes on
        env.reset(seed=0)


def test_a_server_killed_and_restarted_serves_new_sessions(server_process):
    port = free_port()
    server = server_process("math", port, "--max-sessions", "2")
    env = RemoteEnv(server.base)
    opening = env.reset(seed=5)
    server.kill()
    with pytest.raises((RemoteEnvError, OSError)):
        env.step(SUBMIT)
    env.close()
    restarted = server_process("math", port, "--max-sessions", "2")
    with RemoteEnv(restarted.base) as env:
        assert env.reset(seed=5) == opening
        assert env.step(SUBMIT)[2] is True
    assert active_sessions(restarted.base) == 0 or wait_until(lambda: active_sessions(restarted.base) == 0, 5)


PROBE = """
import json, socket
out = {}
for name, address in (("internet", ("192.0.2.1", 80)), ("server", ("127.0.0.1", PORT))):
    try:
        socket.create_connection(address, timeout=1).close()
        out[name] = "connected"
    except OSError as exc:
        out[name] = type(exc).__name__
try:
    open(PACKAGE_FILE).read()
    out["package"] = "read"
except OSError as exc:
    out["package"] = type(exc).__name__
raise RuntimeError(json.dumps(out, sort_keys=True))
"""


def probe_result(messages: list[dict]) -> dict:
    line = next(line for line in messages[-1]["content"].splitlines() if "RuntimeError: {" in line)
    return json.loads(line.split("RuntimeError: ", 1)[1])


def test_the_coding_sandbox_refuses_the_same_things_served_as_in_process():
    from agentgym_envs.scenarios.coding.sandbox import Sandbox

    with Sandbox() as sandbox:
        if not sandbox.isolated:
            pytest.skip("this machine gives the sandbox no namespaces")
    kwargs = {"cache_results": False, "sandbox": "strict"}
    with thread_server("Coding-v0", make_kwargs=kwargs) as base:
        port = urlsplit(base).port
        program = PROBE.replace("PORT", str(port)).replace("PACKAGE_FILE", repr(str(Path(agentgym_envs.__file__))))
        action = json.dumps({"name": "run_tests", "arguments": {"program": program}})
        local = gym.make("AgentGym/Coding-v0", action_mode="text", **kwargs)
        local.reset(seed=0)
        expected = local.step(action)[4]["messages"]
        local.close()
        with RemoteEnv(base) as env:
            env.reset(seed=0)
            served = env.step(action)[4]["messages"]
    assert served == expected
    assert probe_result(served) == {"internet": "OSError", "server": "ConnectionRefusedError",
                                    "package": "FileNotFoundError"}

"""Coding-v0 isolates programs in Ray workers as it does in process: the same isolation, the
network unreachable and the package out of sight."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

import agentgym_envs
from agentgym_envs.scale import RayVectorEnv
from agentgym_envs.scenarios.coding.sandbox import Job

PROBE = f"""
import errno, json, os, socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2).close()
    network = "connected"
except OSError as exc:
    network = errno.errorcode.get(exc.errno, str(exc))
print(json.dumps([network, os.path.exists({str(Path(agentgym_envs.__file__).resolve())!r})]))
"""


class SandboxProbe(gym.Wrapper):
    """A Coding-v0 env that can run :data:`PROBE` in its own sandbox."""

    def probe(self) -> tuple[str, str]:
        """The sandbox's isolation and the probe's output."""
        sandbox = self.env.unwrapped.scenario.sandbox
        return sandbox.isolation, sandbox.run(PROBE, [Job()])[0].stdout


def make_coding() -> gym.Env:
    return SandboxProbe(gym.make("AgentGym/Coding-v0", cache_results=False))


def test_coding_programs_in_ray_workers_are_isolated_as_in_process():
    local = make_coding()
    try:
        in_process = local.probe()
    finally:
        local.close()
    remote = RayVectorEnv([make_coding] * 2, num_workers=2)
    try:
        in_workers = remote.call("probe")
    finally:
        remote.close()
    assert in_process[0] in ("root", "user")
    assert in_process[1] == '["ENETUNREACH", false]\n'
    assert in_workers == (in_process, in_process)

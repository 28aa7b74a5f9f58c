"""Hostile programs run by an ordinary user, through the real environment's sandbox: it
isolates them in a user namespace.

CI runs as root, so each test forks a child that becomes uid/gid 65534 (``nobody``, no
groups) with a temporary home of its own that holds a marker file, makes a Coding-v0
environment there and runs the probe programs in its sandbox; the child reports back as
JSON. Run as an ordinary user, the child keeps that user and home. The probes reach the
interpreter only through the sandbox API, so the child needs no access to this checkout
beyond what it inherited (the sandbox picks an interpreter that user can run). Afterwards
no process of that uid is left. Under pytest-xdist the tests of this module take a lock
first, so one worker's check never counts another worker's programs.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_envs
from agentgym_envs.scenarios.coding import problems, sandbox
from agentgym_envs.scenarios.coding.forkserver import BASE_ENV
from agentgym_envs.scenarios.coding.sandbox import IsolationUnavailable, Job, SandboxLimits, Status

UNPRIVILEGED = 65534
ROOT = os.geteuid() == 0
USER = UNPRIVILEGED if ROOT else os.getuid()
PACKAGE = Path(agentgym_envs.__file__).resolve().parent
PROBLEM_FILE = Path(problems.__file__).resolve().with_name("easy.py")
REPO = Path(__file__).resolve().parents[2]
MARKER = "marker.txt"
SECRET = ("AGENTGYM_TEST_SECRET", "s3cret-value")
LIMITS = SandboxLimits(cpu_time_s=5, wall_time_s=30)
LOCK = Path(tempfile.gettempdir()) / f"agentgym-unprivileged-tests-{USER}.lock"
SMALL = SandboxLimits(cpu_time_s=0.5, wall_time_s=10, max_processes=8)
pytestmark = pytest.mark.usefixtures("one_worker_at_a_time", "machine_unchanged")


@pytest.fixture
def one_worker_at_a_time() -> Iterator[None]:
    """Hold a lock shared by every pytest worker: the processes of ``USER`` are theirs alone."""
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture
def home() -> Iterator[Path]:
    """A home directory owned by the unprivileged user, holding a marker file."""
    path = Path(tempfile.mkdtemp(prefix="agentgym-home-"))
    (path / MARKER).write_text("private")
    for entry in (path, path / MARKER):
        os.chown(entry, USER, USER)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def run_unprivileged(home: Path, *programs: tuple[str, SandboxLimits]) -> list[dict]:
    """Run ``programs`` one after the other in a Coding-v0 environment's sandbox, made in a
    child process of the unprivileged user (HOME ``home``, a secret in its environment);
    return each one's isolation, status and output."""
    before = set(sandbox.sandbox_processes({USER}))
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read_end)
        _child(home, programs, write_end)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = json.loads(pipe.read() or b'{"error": "the child reported nothing"}')
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert set(sandbox.sandbox_processes({USER})) <= before
    if "unavailable" in report:
        pytest.skip(f"no user namespaces here: {report['unavailable']}")
    assert "error" not in report, report.get("error")
    return report["results"]


def _child(home: Path, programs: tuple[tuple[str, SandboxLimits], ...], write_end: int) -> None:
    report: dict = {}
    try:
        if ROOT:
            os.setgroups([])
            os.setgid(UNPRIVILEGED)
            os.setuid(UNPRIVILEGED)
        os.environ.update({"HOME": str(home), SECRET[0]: SECRET[1]})
        sandbox._usable_python.cache_clear()  # root's choice may be unusable by this user
        env = gym.make("AgentGym/Coding-v0", cache_results=False)
        try:
            box = env.unwrapped.scenario.sandbox
            results = [box.run(textwrap.dedent(source), [Job()], limits)[0] for source, limits in programs]
            report["results"] = [
                {"isolation": box.isolation, "status": r.status.value, "stdout": r.stdout, "stderr": r.stderr}
                for r in results
            ]
        finally:
            env.close()
    except IsolationUnavailable as exc:
        report = {"unavailable": str(exc)}
    except Exception as exc:  # noqa: BLE001  (reported to the parent, whatever it is)
        report = {"error": repr(exc)}
    finally:
        os.write(write_end, json.dumps(report).encode())
        os._exit(0)


def _report(result: dict) -> object:
    assert (result["isolation"], result["status"]) == ("user", "ok"), result["stderr"]
    return json.loads(result["stdout"])


def test_unprivileged_user_gets_no_network(home):
    (result,) = run_unprivileged(home, ("""
        import errno, json, socket
        try:
            socket.create_connection(("192.0.2.1", 80), timeout=2).close()
            outcome = "connected"
        except OSError as exc:
            outcome = errno.errorcode.get(exc.errno, str(exc))
        print(json.dumps([outcome, [name for _, name in socket.if_nameindex()]]))
    """, LIMITS))
    assert _report(result) == ["ENETUNREACH", ["lo"]]


def test_unprivileged_user_sees_no_package_problems_or_home(home):
    targets = [PACKAGE / "__init__.py", PROBLEM_FILE, REPO / "README.md", home / MARKER, home]
    (result,) = run_unprivileged(home, (f"""
        import json, os
        def write(path):
            try:
                open(path, "w").write("x")
                return "written"
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "visible": [path for path in {[str(t) for t in targets]!r} if os.path.exists(path)],
            "home_write": write({str(home / "planted.txt")!r}),
        }}))
    """, LIMITS))
    assert _report(result) == {"visible": [], "home_write": "FileNotFoundError"}
    assert sorted(os.listdir(home)) == [MARKER]


def test_unprivileged_user_leaks_no_environment(home):
    (result,) = run_unprivileged(home, ("""
        import json, os
        def read(path):
            try:
                return open(path).read()
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps([sorted(os.environ), [read(f"/proc/{pid}/environ") for pid in (1, os.getppid())]]))
    """, LIMITS))
    names, reads = _report(result)
    assert names == sorted([*BASE_ENV, "HOME", "TMPDIR"])
    assert reads == ["FileNotFoundError"] * 2 and SECRET[1] not in result["stdout"]


def test_unprivileged_program_has_no_capabilities_and_cannot_signal_the_supervisor(home):
    attack = """
        import json, os, signal
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
            os.kill(1, sig)
        status = open("/proc/self/status").read().splitlines()
        print(json.dumps([line.split()[1] for line in status if line.startswith(("CapEff", "CapPrm"))]))
    """
    attacked, after = run_unprivileged(home, (attack, LIMITS), ("print('alive')", LIMITS))
    assert _report(attacked) == ["0000000000000000"] * 2
    assert (after["status"], after["stdout"]) == ("ok", "alive\n")


def test_unprivileged_fork_bomb_is_confined(home):
    bounded = """
        import os, time
        started = failed = 0
        for _ in range(50):
            try:
                pid = os.fork()
            except OSError:
                failed += 1
                continue
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            started += 1
        print(started, failed)
    """
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    counted, bombed, after = run_unprivileged(
        home, (bounded, SMALL), (bomb, SandboxLimits(cpu_time_s=0.5, wall_time_s=2, max_processes=8)),
        ("print('alive')", LIMITS),
    )
    assert counted["stdout"] == f"{SMALL.max_processes - 1} {50 - SMALL.max_processes + 1}\n"
    assert bombed["status"] == Status.TIMEOUT.value
    assert after["stdout"] == "alive\n"


def test_unprivileged_memory_bomb_hits_the_memory_limit(home):
    (result,) = run_unprivileged(home, ("x = bytearray(2 ** 31)", SMALL))
    assert result["status"] == Status.MEMORY_LIMIT.value

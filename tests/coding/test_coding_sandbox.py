"""The sandbox ends hostile programs with a clear status and leaves the machine as it was.

Every test runs under the ``machine_unchanged`` fixture: afterwards no process of the
sandbox uids it used is alive (or a zombie), no file of theirs is left in the
world-writable directories, and this process holds no extra file descriptors. Programs run
in the sandbox's namespaces (the only way ``sandbox="auto"`` runs them); what they can and
cannot reach there is checked in test_coding_sandbox_isolation.py, and as an ordinary user
in test_coding_sandbox_unprivileged.py.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from agentgym_envs.scenarios.coding.sandbox import Job, SandboxLimits, Status, run_batch, run_program

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="uid isolation needs root")
pytestmark = pytest.mark.usefixtures("machine_unchanged")
SMALL = SandboxLimits(cpu_time_s=0.5, wall_time_s=10, max_processes=8)


def test_runs_a_program_with_stdin():
    result = run_program("import sys\nname = input()\nprint('hello', name, sys.argv, __name__)", "world\n")
    assert result.status is Status.OK
    assert result.exit_code == 0
    assert result.stdout == "hello world ['main.py'] __main__\n"
    assert result.stderr == ""
    assert result.returned is None


def test_exit_codes_and_exit_builtin():
    assert run_program("exit()").status is Status.OK
    failed = run_program("import sys\nprint('partial')\nsys.exit(3)")
    assert (failed.status, failed.exit_code, failed.stdout) == (Status.RUNTIME_ERROR, 3, "partial\n")


def test_traceback_shows_only_the_program():
    result = run_program("def f(x):\n    return 1 / x\n\nf(0)\n")
    assert result.status is Status.RUNTIME_ERROR
    assert 'File "main.py", line 4, in <module>' in result.stderr
    assert "return 1 / x" in result.stderr
    assert result.stderr.rstrip().endswith("ZeroDivisionError: division by zero")
    assert "_supervisor" not in result.stderr


def test_syntax_error_is_a_runtime_error():
    result = run_program("def f():\n    x = 1\n      return x\n")
    assert result.status is Status.RUNTIME_ERROR
    assert "IndentationError" in result.stderr and 'File "main.py", line 3' in result.stderr


def test_infinite_loop_times_out_on_cpu_time():
    result = run_program("while True:\n    pass", limits=SMALL)
    assert result.status is Status.TIMEOUT and result.exit_code == -signal.SIGPROF  # the CPU timer, nothing else
    # the timer also counts the interpreter's start, which the program's CPU time leaves out (more of it on a loaded machine)
    assert 0.2 <= result.cpu_time_s < 1.5


def test_sleeping_program_times_out_on_wall_clock():
    result = run_program("import time\ntime.sleep(60)", limits=SandboxLimits(cpu_time_s=0.5, wall_time_s=0.5))
    assert result.status is Status.TIMEOUT
    assert 0.5 <= result.wall_time_s < 5


def test_ignoring_the_cpu_signals_does_not_escape_the_limit():
    source = """
import signal
for ignored in (signal.SIGPROF, signal.SIGXCPU):
    signal.signal(ignored, signal.SIG_IGN)
while True:
    pass
"""
    result = run_program(source, limits=SandboxLimits(cpu_time_s=0.2, wall_time_s=30))
    assert result.status is Status.TIMEOUT
    assert result.exit_code == -signal.SIGKILL  # RLIMIT_CPU's hard limit: 2 s of CPU


@needs_root
def test_fork_bomb_is_confined():
    bounded = """
import os, time
started = failed = 0
for _ in range(200):
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
    result = run_program(bounded, limits=SMALL)
    started, failed = map(int, result.stdout.split())
    assert (started, failed) == (SMALL.max_processes - 1, 200 - SMALL.max_processes + 1)
    # The limit holds, so the real thing is safe to run.
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = run_program(bomb, limits=SandboxLimits(cpu_time_s=0.5, wall_time_s=2, max_processes=8))
    assert result.status is Status.TIMEOUT
    assert run_program("print('alive')").stdout == "alive\n"


def test_memory_bomb_hits_the_memory_limit():
    rss_before = _rss_kb()
    big = run_program("x = bytearray(2 ** 31)", limits=SMALL)
    assert big.status is Status.MEMORY_LIMIT
    filling = SandboxLimits(cpu_time_s=3, wall_time_s=20)  # page faults cost CPU on a busy machine
    growing = run_program("chunks = []\nwhile True:\n    chunks.append(' ' * 10 ** 7)", limits=filling)
    assert growing.status is Status.MEMORY_LIMIT
    assert "MemoryError" in growing.stderr
    assert _rss_kb() - rss_before < 50_000


def test_within_the_memory_limit_allocation_works():
    result = run_program("x = bytearray(64 * 2 ** 20)\nprint(len(x))", limits=SMALL)
    assert (result.status, result.stdout) == (Status.OK, f"{64 * 2**20}\n")


def test_huge_output_is_capped_and_stopped():
    limits = SandboxLimits(cpu_time_s=5, output_bytes=10_000)
    result = run_program("while True:\n    print('x' * 1000)", limits=limits)
    assert result.status is Status.OUTPUT_LIMIT
    assert len(result.stdout) == 10_000 and set(result.stdout) == {"x", "\n"}
    assert result.cpu_time_s < 2.5  # stopped at the cap, long before its CPU limit (on any machine's speed)
    flood = run_program("import sys\nwhile True:\n    sys.stderr.write('e' * 4096)", limits=limits)
    assert flood.status is Status.OUTPUT_LIMIT and len(flood.stderr) == 10_000


def test_file_size_limit():
    result = run_program("open('big', 'wb').write(b'x' * (2 << 20))", limits=SandboxLimits(file_size_mb=1))
    assert result.status is Status.RUNTIME_ERROR
    assert "File too large" in result.stderr


@needs_root
def test_writes_outside_the_work_directory_fail_or_are_removed(tmp_path):
    private = tmp_path / "owned-by-root.txt"
    denied = run_program(f"open({str(private)!r}, 'w').write('x')")
    assert denied.status is Status.RUNTIME_ERROR and "FileNotFoundError" in denied.stderr
    assert not private.exists()
    name = f"agentgym-test-{os.getpid()}-{time.monotonic_ns()}"
    littering = f"""
import os
open('/tmp/{name}', 'w').write('x')
os.mkdir('/dev/shm/{name}')
open('/dev/shm/{name}/f', 'w').write('x')
print(os.getcwd())
"""
    result = run_program(littering)
    assert result.status is Status.OK
    assert not Path(f"/tmp/{name}").exists() and not Path(f"/dev/shm/{name}").exists()
    assert not Path(result.stdout.strip()).exists()  # the work directory is gone too


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("AGENTGYM_TEST_SECRET", "s3cret-value")
    source = f"""
import os
print(sorted(os.environ))
for pid in (os.getppid(), {os.getpid()}, 1):
    try:
        print(open(f'/proc/{{pid}}/environ').read())
    except OSError as exc:
        print(type(exc).__name__)
"""
    result = run_program(source)
    assert result.status is Status.OK
    assert result.stdout.splitlines()[0] == "['HOME', 'LANG', 'MALLOC_ARENA_MAX', 'PATH', 'TMPDIR']"
    assert result.stdout.splitlines()[1:] == ["FileNotFoundError"] * 3
    assert "s3cret-value" not in result.stdout


@needs_root
def test_program_killing_its_process_group_or_everything_it_can():
    own_group = run_program("import os, signal\nos.killpg(os.getpgrp(), signal.SIGKILL)")
    assert (own_group.status, own_group.exit_code) == (Status.KILLED, -signal.SIGKILL)
    # kill(-1) signals every process the caller may signal except itself: the parent too.
    everything = (
        "import os, signal, time\nif os.fork() == 0:\n    os.kill(-1, signal.SIGKILL)\ntime.sleep(30)"
    )
    assert run_program(everything, limits=SMALL).status is Status.KILLED
    host = run_program(f"import os, signal\nos.kill({os.getpid()}, signal.SIGTERM)")
    assert host.status is Status.RUNTIME_ERROR and "ProcessLookupError" in host.stderr
    assert run_program("print('still here')").stdout == "still here\n"


def test_background_processes_do_not_survive_the_run():
    """A daemonised grandchild (new session, parent gone) is killed too: the fixture checks."""
    source = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
time.sleep(0.2)
"""
    assert run_program(source, limits=SMALL).status is Status.OK


def test_batch_runs_each_job_separately():
    source = "import sys\ndef double(x):\n    return [x, x]\nprint(sys.stdin.read().upper(), end='')"
    jobs = [Job(stdin="a"), Job(stdin="b"), Job(call="double", args=[{"k": 1}]), Job(call="missing")]
    first, second, called, missing = run_batch(source, jobs)
    assert (first.stdout, second.stdout) == ("A", "B")
    assert (called.status, called.returned, called.stdout) == (Status.OK, '[{"k": 1}, {"k": 1}]', "")
    assert missing.status is Status.RUNTIME_ERROR and "defines no function 'missing'" in missing.stderr


def test_solution_class_methods_can_be_called():
    source = "class Solution:\n    def add(self, a, b):\n        return a + b\n"
    (result,) = run_batch(source, [Job(call="add", args=[2, 3])])
    assert result.returned == "5"


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")

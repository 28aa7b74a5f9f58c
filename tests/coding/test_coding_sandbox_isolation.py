"""What a hostile program can reach inside the sandbox's namespaces (as this process's user:
root in CI), how root without CAP_SYS_ADMIN is isolated, and what the sandbox does where no
namespaces can be made. The same probes as an ordinary user: test_coding_sandbox_unprivileged.py.

The namespace tests are skipped, with the sandbox's reason, where the kernel refuses every
way of isolating; every test checks afterwards that the sandbox left no process, file or
file descriptor behind (``machine_unchanged``).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import socket
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest

import agentgym_envs
from agentgym_envs.scenarios.coding import problems
from agentgym_envs.scenarios.coding.runner import StdinTest, run_tests
from agentgym_envs.scenarios.coding.sandbox import (
    SANDBOX_UIDS,
    IsolationUnavailable,
    Job,
    RunResult,
    Sandbox,
    SandboxLimits,
    Status,
)

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(agentgym_envs.__file__).resolve().parent
PROBLEM_FILE = Path(problems.__file__).resolve().with_name("easy.py")
ROOT = os.geteuid() == 0
try:
    with Sandbox() as probe:
        UNAVAILABLE = "" if probe.isolated else "unisolated"
except IsolationUnavailable as exc:
    UNAVAILABLE = str(exc)
needs_namespaces = pytest.mark.skipif(bool(UNAVAILABLE), reason=UNAVAILABLE)
pytestmark = pytest.mark.usefixtures("machine_unchanged")
LIMITS = SandboxLimits(cpu_time_s=5, wall_time_s=30)
PR_CAPBSET_DROP, CAP_SYS_ADMIN = 24, 21
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SYS_UNSHARE = {"x86_64": 272, "aarch64": 97}
NETWORK_PROBE = """
import errno, json, os, socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2).close()
    outcome = "connected"
except OSError as exc:
    outcome = errno.errorcode.get(exc.errno, str(exc))
print(json.dumps(outcome))
"""


def _run(source: str, stdin: str = "") -> RunResult:
    with Sandbox("strict") as sandbox:
        result = sandbox.run(textwrap.dedent(source), [Job(stdin=stdin)], LIMITS)[0]
    assert result.status is Status.OK, result.stderr
    return result


def _report(source: str, stdin: str = "") -> dict:
    """Run a program that prints one JSON object; return that object."""
    return json.loads(_run(source, stdin).stdout)


@needs_namespaces
def test_a_socket_of_the_host_on_loopback_cannot_be_reached():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        report = _report(f"""
            import json, socket
            def attempt(address):
                try:
                    socket.create_connection(address, timeout=2).close()
                    return "connected"
                except OSError as exc:
                    return type(exc).__name__ + ": " + str(exc.strerror)
            with socket.socket() as own:  # the namespace's own loopback works
                own.bind(("127.0.0.1", {port}))
                own.listen()
                loopback = attempt(("127.0.0.1", {port}))
            print(json.dumps({{
                "host": attempt(("127.0.0.1", {port})),
                "outside": attempt(("192.0.2.1", 80)),
                "loopback": loopback,
                "interfaces": [name for _, name in socket.if_nameindex()],
            }}))
        """)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing ever connected
    assert report["host"] == "ConnectionRefusedError: Connection refused"
    assert report["outside"] == "OSError: Network is unreachable"
    assert report["loopback"] == "connected"
    assert report["interfaces"] == ["lo"]


@needs_namespaces
def test_package_problems_repository_and_home_are_out_of_sight(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden")
    targets = [PACKAGE / "__init__.py", PROBLEM_FILE, REPO / "README.md", REPO / ".git", Path(__file__), secret]
    targets += [Path("/etc/passwd"), Path(sys.executable)]
    report = _report(f"""
        import json, os
        seen = []
        for directory, subdirectories, files in os.walk("/"):
            if directory == "/":
                subdirectories.remove("proc")
            seen += [os.path.join(directory, name) for name in subdirectories + files]
        def attempt(path):
            try:
                with open(path, "rb") as file:
                    return "read " + str(len(file.read()))
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "top": sorted(os.listdir("/")),
            "files": len(seen),
            "suspicious": [path for path in seen if "agentgym" in path or "packages/" in path],
            "attempts": [attempt(path) for path in {[str(t) for t in targets]!r}],
        }}))
    """)
    assert report["top"] == sorted(["dev", "proc", "tmp", *_top_level_binds()])
    assert report["files"] > 100  # the stdlib is there
    assert report["suspicious"] == []
    assert report["attempts"] == ["FileNotFoundError"] * len(targets)


def _top_level_binds() -> set[str]:
    from agentgym_envs.scenarios.coding.forkserver import mount_plan
    from agentgym_envs.scenarios.coding.sandbox import default_python

    plan = mount_plan(default_python())
    return {path.split("/")[1] for path in [*plan["binds"], *plan["links"]]}


@needs_namespaces
def test_other_processes_and_the_parent_environment_are_invisible():
    report = _report(f"""
        import json, os
        def attempt(path):
            try:
                return open(path).read()[:20]
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps({{
            "me": os.getpid(),
            "visible": sorted(int(entry) for entry in os.listdir("/proc") if entry.isdigit()),
            "parent": os.getppid(),
            "reads": [attempt(f"/proc/{{pid}}/{{name}}") for pid in (1, os.getppid(), {os.getpid()})
                      for name in ("environ", "cmdline")],
        }}))
    """)
    assert report["visible"] == [report["me"]]
    assert report["parent"] == 1  # the supervisor, pid 1 of the namespace, hidden from the program
    assert report["reads"] == ["FileNotFoundError"] * 6


@needs_namespaces
def test_writes_into_the_repository_package_and_stdlib_fail():
    stdlib = os.path.dirname(os.__file__)
    targets = [REPO / "planted.txt", PACKAGE / "planted.py", Path(stdlib) / "planted.py", Path("/planted.txt")]
    report = _report(f"""
        import json
        def attempt(path):
            try:
                open(path, "w").write("x")
                return "written"
            except OSError as exc:
                return type(exc).__name__
        print(json.dumps([attempt(path) for path in {[str(t) for t in targets]!r}]))
    """)
    assert report[:2] == ["FileNotFoundError"] * 2  # not there at all
    assert report[2:] == ["OSError"] * 2  # a read-only file system
    assert not any(target.exists() for target in targets)


@needs_namespaces
def test_nothing_can_be_executed():
    report = _report("""
        import json, subprocess
        try:
            subprocess.run(["/bin/sh", "-c", "echo escaped"])
            outcome = "ran"
        except OSError as exc:
            outcome = type(exc).__name__
        print(json.dumps(outcome))
    """)
    assert report == "FileNotFoundError"


@needs_namespaces
def test_batches_of_one_sandbox_share_no_files():
    writer = "import os\nfor d in ('.', '/tmp', '/dev/shm'):\n    open(os.path.join(d, 'left'), 'w').write('x')"
    reader = "import os\nprint([os.path.exists(os.path.join(d, 'left')) for d in ('.', '/tmp', '/dev/shm')])"
    with Sandbox("strict") as sandbox:
        first, second = sandbox.run(writer, [Job(), Job()])
        (later,) = sandbox.run(reader, [Job()])
    assert first.status is second.status is Status.OK  # the jobs of one batch share the work directory
    assert later.stdout == "[False, False, False]\n"


# Searches the program's whole writable memory (which it shares, copy-on-write, with the
# supervisor it was forked from) for a byte string given XOR-ed with 0x5A, so that the
# program's own source never holds it; the needle's own buffer is skipped.
MEMORY_SEARCH = """
import ctypes, json, sys
libc = ctypes.CDLL(None)
libc.memmem.restype = ctypes.c_void_p
libc.memmem.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_size_t]
def in_memory(masked):
    needle = ctypes.create_string_buffer(len(masked))
    for i, code in enumerate(masked):
        needle[i] = code ^ 0x5A
    own = ctypes.addressof(needle)
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] not in ("[heap]", "[stack]")):
            continue
        position, end = (int(bound, 16) for bound in fields[0].split("-"))
        while position < end:
            hit = libc.memmem(position, end - position, own, len(masked))
            if not hit:
                break
            if hit != own:
                return True
            position = hit + 1
    return False
print(json.dumps([in_memory(masked) for masked in MASKED]))
"""


def test_expected_outputs_and_later_inputs_never_reach_the_program():
    later_input, expected_output = "later-input-7f3a9c", "expected-output-51d2e8"
    masked = [[byte ^ 0x5A for byte in text.encode()] for text in (later_input, expected_output)]
    program = f"MASKED = {masked!r}\n" + MEMORY_SEARCH
    tests = [StdinTest("first\n", expected_output), StdinTest(later_input, expected_output)]
    with Sandbox() as sandbox:
        first, second = run_tests(program, tests, LIMITS, sandbox)
    # The search works: the second job finds its own input, which the supervisor handed it.
    assert json.loads(second.got) == [True, False]
    assert json.loads(first.got) == [False, False]


@needs_namespaces
@pytest.mark.skipif(not ROOT, reason="needs root to drop a capability")
def test_root_without_cap_sys_admin_isolates_in_a_user_namespace():
    script = textwrap.dedent(f"""
        import json, os
        from agentgym_envs.scenarios.coding.sandbox import Job, Sandbox
        with Sandbox("strict") as sandbox:
            result = sandbox.run({NETWORK_PROBE + "print(os.getuid())"!r}, [Job()])[0]
            print(json.dumps([sandbox.isolation, *result.stdout.splitlines()]))
    """)
    isolation, network, uid = json.loads(_python(script, _drop_sys_admin).stdout)
    assert (isolation, network) == ("user", '"ENETUNREACH"')  # root as in a default container
    assert int(uid) in SANDBOX_UIDS  # not root, which RLIMIT_NPROC would not limit


def test_without_user_namespaces_auto_and_strict_refuse_and_none_warns():
    """A seccomp filter makes unshare(2) fail, as where user namespaces are switched off."""
    script = textwrap.dedent("""
        import warnings
        import gymnasium as gym
        import agentgym_envs
        from agentgym_envs.scenarios.coding.sandbox import IsolationUnavailable, Job, Sandbox
        for attempt in (lambda: Sandbox("strict"), lambda: Sandbox().run("print(1)", [Job()]),
                        lambda: gym.make("AgentGym/Coding-v0").unwrapped.scenario.sandbox.isolated):
            try:
                attempt()
                print("ran")
            except IsolationUnavailable as exc:
                print(exc)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                with Sandbox("none") as sandbox:
                    print(sandbox.isolated, sandbox.run("print(6 * 7)", [Job()])[0].stdout.strip())
        print([warning.category.__name__ for warning in caught])
    """)
    lines = _python(script, _forbid_unshare).stdout.splitlines()
    for refusal in lines[:3]:
        assert refusal.startswith("the coding sandbox cannot isolate programs here")
        assert "a user namespace: [Errno 1] unshare: Operation not permitted" in refusal
        assert "kernel.unprivileged_userns_clone=1" in refusal and "sandbox='none'" in refusal
    assert lines[3:] == ["False 42", "False 42", "['SandboxWarning']"]


def _python(script: str, preexec_fn) -> subprocess.CompletedProcess:
    """Run ``script`` in a new interpreter that first calls ``preexec_fn``; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120,
        preexec_fn=preexec_fn,
    )
    assert result.returncode == 0, result.stderr
    return result


def _drop_sys_admin() -> None:
    if ctypes.CDLL(None).prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
        raise OSError("cannot drop CAP_SYS_ADMIN")


def _forbid_unshare() -> None:
    """Install a seccomp filter: unshare(2) fails with EPERM, every other call is allowed."""
    instruction = struct.Struct("HBBI")
    program = b"".join(
        instruction.pack(*fields)
        for fields in (
            (0x20, 0, 0, 0),  # load the system call number
            (0x15, 0, 1, SYS_UNSHARE[platform.machine()]),  # unshare?
            (0x06, 0, 0, 0x00050000 | errno.EPERM),  # yes: fail with EPERM
            (0x06, 0, 0, 0x7FFF0000),  # no: allow
        )
    )
    code = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HP", len(program) // instruction.size, ctypes.addressof(code))  # struct sock_fprog
    libc = ctypes.CDLL(None)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog) != 0:
        raise OSError("cannot install the seccomp filter")


def test_unknown_sandbox_mode_is_refused():
    with pytest.raises(ValueError, match="sandbox must be one of"):
        Sandbox("off")
    with pytest.raises(ValueError, match="sandbox must be one of"):
        gym.make("AgentGym/Coding-v0", sandbox="off")


@needs_namespaces
def test_env_runs_programs_in_its_sandbox_and_close_stops_it():
    env = gym.make("AgentGym/Coding-v0", action_mode="text", sandbox="strict", cache_results=False)
    env.reset(seed=0)
    program = "import os\nprint(sorted(os.listdir('/proc')))"
    _, _, _, _, info = env.step(json.dumps({"name": "run_tests", "arguments": {"program": program}}))
    assert info["valid"]
    assert _supervisors() != []
    env.close()
    assert _supervisors() == []


def _supervisors() -> list[int]:
    """Pids of this process's children that run the sandbox supervisor."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        pids += Path(f"/proc/self/task/{task}/children").read_text().split()
    return [int(pid) for pid in pids if b"_supervisor.py" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def test_a_forked_child_starts_a_sandbox_of_its_own():
    with Sandbox() as sandbox:
        assert sandbox.run("print(1)", [Job()])[0].stdout == "1\n"
        child = os.fork()
        if child == 0:  # the parent's supervisor is not this process's: it must not be used
            ok = False
            try:
                ok = sandbox.run("print(2)", [Job()])[0].stdout == "2\n"
                sandbox.close()
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert sandbox.run("print(3)", [Job()])[0].stdout == "3\n"  # the parent's still works

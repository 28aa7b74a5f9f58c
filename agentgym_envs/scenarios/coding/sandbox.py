"""Run untrusted, agent-written Python programs with hard resource limits, isolated in
Linux namespaces: created as root, or inside a user namespace without root. The full
account, with what is and is not contained with and without root, is docs/coding_sandbox.md.

How a program runs. A :class:`Sandbox` starts a supervisor (``_supervisor.py``, under
``python -I -S``: no ``PYTHON*`` variables, no site-packages) once, and keeps it as a fork
server with a warm interpreter: for each job of each batch it forks a child that becomes the
program, so a job costs a fork, not an interpreter start. :func:`run_batch` and
:func:`run_program` use a sandbox of their own for one call. Jobs get a scrubbed
environment: only ``PATH``, ``LANG``, ``MALLOC_ARENA_MAX=1`` (so threads do not each reserve
a 64 MB arena against the address-space limit) and ``HOME``/``TMPDIR`` pointing at the work
directory, which holds the program as ``main.py``; a batch's jobs share it, and it is
deleted after the batch.

Namespaces (``_jail.py``). The supervisor enters new network, mount, pid, IPC and UTS
namespaces, built with the kernel's own ``unshare(2)``, ``mount(2)`` and ``pivot_root(2)``
(no tool to install): as root directly; otherwise (or where root lacks CAP_SYS_ADMIN) inside
a new user namespace that maps only the caller's uid and gid (as root: of a sandbox uid).
The program then sees only a read-only root holding the interpreter's stdlib and shared
libraries (no site-packages, no executables), ``/dev/null`` and friends, its own processes
in ``/proc``, and ``/tmp`` and ``/dev/shm`` (tmpfs of :data:`~.forkserver.TMP_MB` MB each,
emptied after every batch); the network namespace has only its own loopback. Each batch
gets a fresh IPC namespace. The supervisor sends the program one job's input at a time;
expected outputs never leave the caller. Where the kernel refuses both ways,
``sandbox="auto"`` and ``sandbox="strict"`` raise :class:`SandboxError`, saying why and how
to allow it (:mod:`.isolation`); only ``sandbox="none"`` runs programs without isolation,
with a :class:`SandboxWarning`.

=============  ==========================================================================
limit          how it is enforced (with and without namespaces)
=============  ==========================================================================
CPU time       ``ITIMER_PROF`` (SIGPROF at the exact limit) backed by ``RLIMIT_CPU``
               (whole seconds, rounded up: SIGXCPU, then SIGKILL one second later) -> timeout
wall time      the supervisor kills the job at the deadline -> timeout
memory         ``RLIMIT_AS`` (address space) -> MemoryError -> memory_limit
file size      ``RLIMIT_FSIZE`` per file -> ``OSError(EFBIG)`` -> runtime_error;
               ``RLIMIT_CORE`` is 0 (no core dumps)
processes      ``RLIMIT_NPROC`` on a uid of the sandbox's own, or counted in the user
               namespace (see below): fork fails with EAGAIN once the job has
               ``max_processes`` tasks (threads count)
output         stdout, stderr and a function's result are each read with a cap; past it the
               job is killed -> output_limit (the captured text is cut at the cap)
leftovers      every job runs in its own process group; afterwards the supervisor, a child
               subreaper (pid 1 of its namespace), SIGKILLs and reaps all processes the
               job left, even ones that left its process group or session
privileges     ``PR_SET_NO_NEW_PRIVS``: an exec'd setuid program gains nothing
=============  ==========================================================================

With root's namespaces (or ``sandbox="none"`` as root), each batch runs as a fresh, random,
unprivileged uid/gid from :data:`SANDBOX_UIDS` with no supplementary groups: root is exempt
from ``RLIMIT_NPROC``, and a uid of its own makes the limit count exactly the sandbox's
tasks; it cannot signal or ptrace the supervisor or the caller. In a user namespace the
program keeps the supervisor's uid (the one mapped) without any capability; since Linux
5.14 ``RLIMIT_NPROC`` counts per user namespace, so the limit counts the job's tasks plus
the supervisor's two; pid 1 of its pid namespace, the supervisor takes no signal from it.
With ``sandbox="none"`` the files a sandbox uid leaves in the world-writable directories
(/tmp, /var/tmp, /dev/shm, /run/lock) are deleted after each batch, and without root the
program runs as the caller's own user (approximate process limit, the user's processes and
files within reach). The interpreter must be usable by the user the supervisor runs as:
:func:`default_python` picks one (``AGENTGYM_SANDBOX_PYTHON`` overrides).

Requires Linux >= 5.3 (``pidfd_open``) with ``/proc/<pid>/task/<tid>/children``
(``CONFIG_PROC_CHILDREN``, on in common kernels).
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import secrets
import shutil
import stat
import subprocess
import sys
import threading
import warnings
from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import isolation
from .forkserver import ForkServer, IsolationRefused, ServerError, ServerStuck

SANDBOX_MODES = ("auto", "strict", "none")
SANDBOX_UIDS = range(1_000_000_000, 1_100_000_000)
"""Uids (and gids) the sandbox runs programs as when the caller is root, one per batch."""
WORLD_WRITABLE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
PYTHON_ENV_VAR = "AGENTGYM_SANDBOX_PYTHON"
_ALLOWANCE_S = 10.0  # the supervisor's own work around a job, on a loaded machine
_warned_unisolated = False


class Status(enum.StrEnum):
    """How a program run ended."""

    OK = "ok"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    KILLED = "killed"


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program): bad interpreter, supervisor crash, or
    no way to isolate the programs (:class:`IsolationUnavailable`)."""


class IsolationUnavailable(SandboxError):
    """The kernel refuses every way of isolating programs here; the message says how to allow one."""


class SandboxWarning(RuntimeWarning):
    """Programs run without isolation, as ``sandbox="none"`` asked: issued once per process."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits that apply to each job separately."""

    cpu_time_s: float = 1.0
    wall_time_s: float | None = None  # None: 2 * cpu_time_s + 1
    memory_mb: int = 256  # address space, so a little more than the usable heap
    file_size_mb: int = 8  # per file written
    max_processes: int = 16  # tasks (processes and threads), the program included
    output_bytes: int = 64 * 1024  # each of stdout, stderr and a function's result

    @property
    def wall_s(self) -> float:
        """The effective wall-clock limit of one job."""
        return self.wall_time_s if self.wall_time_s is not None else 2 * self.cpu_time_s + 1


@dataclass(frozen=True)
class Job:
    """One run of the batch's program: with ``stdin`` as input, or (when ``call`` is set)
    loaded as module ``solution`` and its function ``call`` called with ``args``
    (JSON-compatible values); a class ``Solution`` with that method also works."""

    stdin: str = ""
    call: str | None = None
    args: Sequence[object] = ()


@dataclass(frozen=True)
class RunResult:
    """The outcome of one job. ``exit_code`` is negative for a signal (like ``Popen``);
    ``returned`` is the JSON text of a called function's result, else ``None``."""

    status: Status
    exit_code: int | None
    stdout: str
    stderr: str
    cpu_time_s: float
    wall_time_s: float
    returned: str | None = None


class Sandbox:
    """Runs programs for one owner (a Coding-v0 environment): a fork server started on first
    use, inside its own namespaces, and kept for every later batch.

    ``mode="auto"`` and ``mode="strict"`` isolate the programs (root's namespaces, else a user
    namespace) or raise :class:`IsolationUnavailable`: ``"auto"`` at the first run, ``"strict"``
    at construction. ``mode="none"`` runs them without isolation, with the resource limits
    and (as root) a uid of their own only, issuing a :class:`SandboxWarning` once per process
    (unless ``warn=False``). Batches run one at a time (thread-safe); after ``fork`` the child
    starts a server of its own. ``close()`` (or garbage collection, or the interpreter's exit)
    stops the server.
    """

    def __init__(self, mode: str = "auto", python: str | None = None, *, warn: bool = True) -> None:
        if mode not in SANDBOX_MODES:
            raise ValueError(f"sandbox must be one of {SANDBOX_MODES}, got {mode!r}")
        self.mode = mode
        self.python = python
        self.warn = warn
        self._server: ForkServer | None = None
        self._lock = threading.Lock()
        if mode == "strict":
            with self._lock:
                self._ensure_server()

    @property
    def isolated(self) -> bool:
        """Whether programs run inside the namespaces (starts the server if needed)."""
        return self.isolation != "none"

    @property
    def isolation(self) -> str:
        """How programs are isolated: ``"root"`` (namespaces made as root), ``"user"`` (in a
        user namespace) or ``"none"`` (starts the server if needed)."""
        with self._lock:
            return self._ensure_server().isolation

    def run(self, source: str, jobs: Sequence[Job], limits: SandboxLimits = SandboxLimits()) -> list[RunResult]:
        """Run ``source`` once per job, in order, in one work directory.

        Raises :class:`SandboxError` only when the sandbox itself fails.
        """
        if not jobs:
            return []
        with self._lock:
            server = self._ensure_server()
            uid = _pick_uid() if os.geteuid() == 0 and server.isolation != "user" else -1
            try:
                return _run_on(server, source, jobs, limits, uid)
            finally:
                if uid >= 0 and not server.namespaces:
                    _remove_files_of(uid)

    def close(self) -> None:
        """Stop the fork server (a later :meth:`run` starts a new one)."""
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None

    def __getstate__(self) -> dict[str, Any]:
        """Its settings only: an unpickled sandbox (an env restored from a checkpoint) starts a
        server of its own, as after ``fork``; programs keep nothing between runs."""
        return {"mode": self.mode, "python": self.python, "warn": self.warn}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["mode"], state["python"], warn=state["warn"])

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _ensure_server(self) -> ForkServer:
        server = self._server
        if server is not None and server.owned:
            return server
        if server is not None and server.owner_pid != os.getpid():
            server.abandon()  # the parent's, inherited through fork
        self._server = None
        self._server = _start_server(self.python or default_python(self.mode), self.mode, self.warn)
        return self._server


def run_program(source: str, stdin: str = "", limits: SandboxLimits = SandboxLimits()) -> RunResult:
    """Run ``source`` as a Python program with ``stdin`` as its input."""
    return run_batch(source, [Job(stdin=stdin)], limits)[0]


def run_batch(
    source: str,
    jobs: Sequence[Job],
    limits: SandboxLimits = SandboxLimits(),
    *,
    python: str | None = None,
    mode: str = "auto",
) -> list[RunResult]:
    """Run ``source`` once per job in a sandbox of its own, started and stopped for this
    call (a :class:`Sandbox` kept open saves that start-up)."""
    with Sandbox(mode, python) as sandbox:
        return sandbox.run(source, jobs, limits)


def _start_server(python: str, mode: str, warn: bool) -> ForkServer:
    """A fork server in root's namespaces, else in a user namespace (as root: of a sandbox
    uid, since root is exempt from RLIMIT_NPROC); unisolated only for ``mode="none"``."""
    ways = [("root", -1), ("user", _pick_uid())] if os.geteuid() == 0 else [("user", -1)]
    if mode == "none":
        if warn:
            _warn_unisolated()
        ways = [("none", -1)]
    refused: dict[str, str] = {}
    for way, uid in ways:
        try:
            return ForkServer(python, way, uid)
        except IsolationRefused as exc:
            refused[way] = str(exc)
        except ServerError as exc:
            raise SandboxError(str(exc)) from None
    raise IsolationUnavailable(isolation.refusal(refused))


def _warn_unisolated() -> None:
    global _warned_unisolated
    if not _warned_unisolated:
        _warned_unisolated = True
        warnings.warn(
            "sandbox='none': the coding sandbox runs programs without isolation: they can use the network "
            "and read this machine's files, the hidden tests included; do not train on it",
            SandboxWarning,
            stacklevel=4,
        )


def _run_on(server: ForkServer, source: str, jobs: Sequence[Job], limits: SandboxLimits, uid: int) -> list[RunResult]:
    spec = {
        "uid": uid,
        "cpu": float(limits.cpu_time_s),
        "wall": float(limits.wall_s),
        "memory": limits.memory_mb << 20,
        "file_size": limits.file_size_mb << 20,
        "processes": limits.max_processes,
        "output": limits.output_bytes,
    }
    results: list[RunResult] = []
    try:
        server.send(("begin", source, spec))
        for job in jobs:
            record = server.request(("job", job.stdin, job.call, list(job.args)), limits.wall_s + _ALLOWANCE_S)
            results.append(_to_result(record))
        server.send(("end",))
    except ServerStuck:  # should never happen: the server was killed; so must the jobs be
        if uid >= 0 and not server.namespaces:
            _kill_all_of(server.python, uid)
        missing = RunResult(Status.TIMEOUT, None, "", "the sandbox supervisor was stopped", 0.0, 0.0)
        return results + [missing] * (len(jobs) - len(results))
    except ServerError as exc:
        raise SandboxError(str(exc)) from None
    return results


def _to_result(record: dict) -> RunResult:
    def text(data: bytes) -> str:
        return data.decode("utf-8", errors="replace")

    returned = record["returned"]
    return RunResult(
        status=Status(record["status"]),
        exit_code=record["exit_code"],
        stdout=text(record["stdout"]),
        stderr=text(record["stderr"]),
        cpu_time_s=record["cpu"],
        wall_time_s=record["wall"],
        returned=None if returned is None else text(returned),
    )


def default_python(mode: str = "auto") -> str:
    """The interpreter a sandbox of ``mode`` runs: ``$AGENTGYM_SANDBOX_PYTHON``, else the
    first of ``sys.executable`` and ``/usr/bin/python3`` whose stdlib the sandbox's user can
    import (e.g. an interpreter under ``/root/.pyenv`` is unreadable to a sandbox uid, as in
    root's user-namespace fallback, and to other users). Raises :class:`IsolationUnavailable`
    if that is why none works."""
    if os.environ.get(PYTHON_ENV_VAR):
        return os.environ[PYTHON_ENV_VAR]
    return _usable_python("none" if mode == "none" else "auto")


@functools.cache
def _usable_python(mode: str) -> str:
    probe = "import bisect, fractions, heapq"  # modules the supervisor has not imported
    unavailable = None
    for candidate in (sys.executable, "/usr/bin/python3"):
        if candidate and os.access(candidate, os.X_OK):
            try:
                with Sandbox(mode, python=candidate, warn=False) as sandbox:
                    if sandbox.run(probe, [Job()])[0].status is Status.OK:
                        return candidate
            except IsolationUnavailable as exc:
                unavailable = unavailable or exc
            except (OSError, SandboxError):
                continue
    if unavailable is not None:
        raise unavailable
    raise SandboxError(f"no Python interpreter usable by the sandbox user; set {PYTHON_ENV_VAR}")


def sandbox_processes(uids: Container[int] = SANDBOX_UIDS) -> list[int]:
    """Pids of live (or zombie) processes whose real uid is one of ``uids`` (by default any
    sandbox uid): empty when every sandbox has cleaned up after itself."""
    pids = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):  # the process may be gone already
            if entry.isdigit() and _real_uid(entry) in uids:
                pids.append(int(entry))
    return pids


def _real_uid(pid: str) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Uid:"):
                return int(line.split()[1])
    raise OSError(f"no Uid line for pid {pid}")


@functools.cache
def _check_uid_range_mapped() -> None:
    """Setting a uid that this user namespace does not map fails: check SANDBOX_UIDS is."""
    for path in ("/proc/self/uid_map", "/proc/self/gid_map"):
        with open(path) as mapping:
            extents = [tuple(map(int, line.split())) for line in mapping if line.strip()]
        if not any(
            start <= SANDBOX_UIDS.start and SANDBOX_UIDS.stop <= start + count for start, _, count in extents
        ):
            raise SandboxError(f"{path} does not map the sandbox ids {SANDBOX_UIDS}")


def _pick_uid() -> int:
    _check_uid_range_mapped()
    return SANDBOX_UIDS.start + secrets.randbelow(len(SANDBOX_UIDS))


def _remove_files_of(uid: int) -> None:
    """Delete what ``uid`` created in the world-writable directories (recursing into
    world-writable subdirectories that belong to others, like /tmp/.X11-unix)."""
    pending = [Path(d) for d in WORLD_WRITABLE_DIRS]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):  # entries of other users may vanish meanwhile
                info = entry.stat(follow_symlinks=False)
                if info.st_uid == uid:
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        os.unlink(entry.path)
                elif stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH:
                    pending.append(Path(entry.path))


def _kill_all_of(python: str, uid: int) -> None:
    """Last resort when the supervisor is gone: SIGKILL every process of ``uid``."""
    subprocess.run(
        [python, "-I", "-S", "-c", "import os, signal; os.kill(-1, signal.SIGKILL)"],
        user=uid,
        group=uid,
        extra_groups=[],
        cwd="/",
        env={},
        timeout=30,
        check=False,
    )

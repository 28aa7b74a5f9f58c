"""The caller's side of the sandbox's fork server (``_supervisor.py``): start it, talk to it,
stop it; and the plan of the read-only root filesystem it builds inside its namespaces.

A :class:`ForkServer` is one supervisor process, started once and then fed batch after
batch over a pipe (see the protocol in ``_supervisor.py``). It is owned by the process that
started it: after ``fork`` the child must start its own (:attr:`ForkServer.owned`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import marshal
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

SUPERVISOR = Path(__file__).with_name("_supervisor.py")
NAMESPACE_WORKDIR = "/tmp/work"  # inside the namespaces; on the host: <root>/work
TMP_MB = 64
"""The size of /tmp inside the namespaces: all a batch may write, the work directory included."""
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 2.0
# Every process the sandbox starts gets only these variables (HOME and TMPDIR are added).
# One malloc arena: otherwise every thread reserves 64 MB of address space (RLIMIT_AS).
BASE_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "1"}
LIBRARY_LINKS = ("/lib", "/lib32", "/lib64", "/libx32")  # top-level symlinks of merged-/usr systems

# Run by the sandbox's interpreter as ``-I -S``: its stdlib directories, the site-packages
# directories that may lie inside them, and the directories of every shared library its
# extension modules load (found by loading them all, lazily, in this throwaway process).
_PLAN_PROBE = """
import ctypes, json, os, sys, sysconfig
stdlib = [p for p in sys.path if os.path.isdir(p)]
for directory in stdlib:
    for name in os.listdir(directory):
        if '.so' in name:
            try:
                ctypes.CDLL(os.path.join(directory, name), os.RTLD_LAZY)
            except OSError:
                pass
libdirs = set()
with open('/proc/self/maps') as maps:
    for line in maps:
        path = line.split(maxsplit=5)[-1].strip()
        if path.startswith('/') and '.so' in os.path.basename(path):
            libdirs.add(os.path.dirname(path))
site = [sysconfig.get_path(name) for name in ('purelib', 'platlib')]
site += [os.path.join(d, name) for d in stdlib for name in ('site-packages', 'dist-packages')]
site = [path for path in site if os.path.isdir(path)]
print(json.dumps({'stdlib': stdlib, 'libdirs': sorted(libdirs), 'site': site}))
"""


class ServerError(RuntimeError):
    """The fork server failed, refused to start, or was stopped; the message says why."""


class ServerStuck(ServerError):
    """The fork server did not answer in time (it has been killed)."""


class IsolationRefused(ServerError):
    """The kernel refused the namespaces the fork server was asked to enter."""


@functools.cache
def mount_plan(python: str) -> dict:
    """What the namespaces' root filesystem holds for ``python``: ``binds`` (directories
    bound read-only: the stdlib and shared-library directories, none inside another),
    ``masks`` (site-packages directories inside them, hidden) and ``links`` (the host's
    top-level library symlinks)."""
    try:
        probe = subprocess.run(
            [python, "-I", "-S", "-c", _PLAN_PROBE],
            capture_output=True,
            env=BASE_ENV,
            cwd="/",
            timeout=START_TIMEOUT_S,
            check=True,
        )
        found = json.loads(probe.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise ServerError(f"cannot inspect the interpreter {python}: {exc}") from None
    binds = _outermost(found["stdlib"] + found["libdirs"])
    masks = [site for site in dict.fromkeys(found["site"]) if any(_inside(site, bound) for bound in binds)]
    links = {link: os.readlink(link) for link in LIBRARY_LINKS if os.path.islink(link)}
    return {"binds": binds, "masks": masks, "links": links}


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _outermost(paths: list[str]) -> list[str]:
    """``paths`` without duplicates and without those inside another one."""
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(_inside(path, outer) for outer in kept):
            kept.append(path)
    return sorted(kept)


class ForkServer:
    """One supervisor process with ``isolation`` ``"root"`` (new namespaces, needs root),
    ``"user"`` (the same inside a new user namespace; as root, of ``uid``) or ``"none"``.

    Raises :class:`ServerError` if it cannot start, :class:`IsolationRefused` if the kernel
    refuses the namespaces.
    """

    def __init__(self, python: str, isolation: str, uid: int = -1) -> None:
        self.python = python
        self.isolation = isolation
        self.owner_pid = os.getpid()
        plan = mount_plan(python) if self.namespaces else {}
        self.root = tempfile.mkdtemp(prefix="agentgym-sandbox-")
        workdir = NAMESPACE_WORKDIR if self.namespaces else os.path.join(self.root, "work")
        if not self.namespaces or uid >= 0:
            os.chmod(self.root, 0o711)  # another uid may enter the directory, not list it
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [python, "-I", "-S", str(SUPERVISOR)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                cwd=self.root,
                env=BASE_ENV | {"HOME": workdir, "TMPDIR": workdir},
                start_new_session=True,
            )
        except OSError as exc:
            self._stderr.close()
            shutil.rmtree(self.root, ignore_errors=True)
            raise ServerError(f"cannot start the sandbox interpreter {python}: {exc}") from None
        self._finalizer = weakref.finalize(self, _stop, self._proc, self._stderr, self.root)
        config = {"isolation": isolation, "uid": uid, "root": self.root, "tmp_mb": TMP_MB, "plan": plan}
        answer = self.request(config, START_TIMEOUT_S)
        if answer["error"] is not None:
            self.close()
            raise IsolationRefused(answer["error"])

    @property
    def namespaces(self) -> bool:
        """Whether the programs run inside the namespaces."""
        return self.isolation != "none"

    @property
    def owned(self) -> bool:
        """Whether this process started the server and it is running (not after a fork)."""
        return self._finalizer.alive and os.getpid() == self.owner_pid

    def send(self, message: object) -> None:
        """Send a request that has no answer (see :meth:`request` for failures)."""
        self._exchange(message, None)

    def request(self, message: object, timeout_s: float) -> object:
        """Send one request and return the answer. On any failure the server is stopped and
        :class:`ServerError` (:class:`ServerStuck` after ``timeout_s``) is raised."""
        return self._exchange(message, timeout_s)

    def _exchange(self, message: object, timeout_s: float | None) -> object:
        try:
            data = marshal.dumps(message)
            self._proc.stdin.write(len(data).to_bytes(4, "big") + data)
            self._proc.stdin.flush()
            if timeout_s is None:
                return None
            deadline = time.monotonic() + timeout_s
            header = self._read(4, deadline)
            return marshal.loads(self._read(int.from_bytes(header, "big"), deadline))
        except ServerError:
            raise
        except (OSError, ValueError, EOFError) as exc:
            raise self._died(str(exc)) from None
        except BaseException:  # e.g. KeyboardInterrupt: the protocol is out of step now
            self._kill()
            raise

    def _read(self, size: int, deadline: float) -> bytes:
        fd = self._proc.stdout.fileno()
        data = b""
        while len(data) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                self._kill()
                raise ServerStuck("the sandbox supervisor did not answer in time and was stopped")
            chunk = os.read(fd, size - len(data))
            if not chunk:
                raise self._died("it closed its output")
            data += chunk
        return data

    def _died(self, cause: str) -> ServerError:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(STOP_TIMEOUT_S)
        self._stderr.seek(0)
        detail = self._stderr.read().decode("utf-8", errors="replace")[-2000:]
        self._kill()
        return ServerError(f"the sandbox supervisor failed ({cause}; exit code {self._proc.returncode}): {detail}")

    def _kill(self) -> None:
        if self.owned:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            self.close()

    def close(self) -> None:
        """Stop the server (it exits when its input closes) and delete its directory."""
        if self.owned:
            self._finalizer()

    def abandon(self) -> None:
        """In a forked child: forget the parent's server without stopping it."""
        self._finalizer.detach()
        for pipe in (self._proc.stdin, self._proc.stdout):
            pipe.close()
        self._proc.returncode = 0  # not this process's child: never wait for it
        self._stderr.close()


def _stop(proc: subprocess.Popen, stderr, root: str) -> None:
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError):  # a write still buffered to a dead server
            pipe.close()
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stderr.close()
    shutil.rmtree(root, ignore_errors=True)

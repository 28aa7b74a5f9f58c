"""Sandbox supervisor: the trusted fork server at the top of every sandbox.

Started by :mod:`sandbox` as ``python -I -S _supervisor.py``, as the caller's user, in a
fresh session and with a scrubbed environment. Stdlib only: it
must run on whichever interpreter the sandbox uses, with no site-packages.

Protocol. Both ways, frames of a 4-byte big-endian length and a ``marshal``-ed value. The
first request configures the server::

    {"isolation": "root" | "user" | "none", "uid": int,
     "plan": {"binds": [...], "masks": [...], "links": {...}},
     "root": str (an empty directory of the caller's), "tmp_mb": int}

With ``"root"`` it enters new namespaces (see ``_jail.py``) whose root filesystem is built
on ``root``; with ``"user"`` the same inside a new user namespace, after becoming ``uid``
(when started as root; -1 otherwise); with ``"none"`` batches run in ``root`` on the host.
It answers ``{"error": None}``, or the reason it could not and exits. Then, for each batch
of jobs::

    ("begin", source, {"uid": int (-1: do not change user), "cpu": float, "wall": float,
               "memory": int, "file_size": int, "processes": int, "output": int})
    ("job", stdin_text, function_name_or_None, args_list)   # once per job
    ("end",)

``begin`` creates the work directory (``work`` in the server's temporary directory, owned
by the job's uid) holding the program as ``main.py``; each ``job`` is answered with its
record (see :func:`_run_job`; ``None`` outside a batch); ``end`` deletes the work directory
(with namespaces: all of ``/tmp`` and ``/dev/shm``) once every process of the batch is dead. Only jobs are
answered: a failure of ``begin`` or ``end`` ends the server, which the next answer shows.
Only one job's input is ever in the server's memory, so a program cannot find the other
tests' inputs in the memory it inherits; expected outputs never come here at all.

For each job the server forks a child that becomes the untrusted program (own process group,
limits, unprivileged uid or, in a user namespace, no capabilities), collects its output with caps, enforces the wall-clock limit,
then kills and reaps every process the job left behind before answering. The server is a
child subreaper (pid 1 of its pid namespace, with namespaces), so orphans of the program
are reparented to it rather than to the host's init, and it is not dumpable, so processes
of the same user cannot open its ``/proc/<pid>/fd`` or ptrace it. It leaves ``SIGINT`` at
its default action, so as pid 1 it installs no handler and a job of the same user (in a
user namespace) can deliver it no signal at all.
"""

import contextlib
import ctypes
import fcntl
import gc
import json
import marshal
import os
import resource
import select
import shutil
import signal
import sys
import time
import traceback

# json and traceback are imported here, once, for the forked programs: a child that
# imported them itself would pay for it on every job (and could fail to under memory pressure).

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWIPC = 0x08000000
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# In a user namespace the jobs share the supervisor's uid, so RLIMIT_NPROC (counted per
# user namespace and uid, Linux >= 5.14) also counts these: the supervisor and the process
# outside the pid namespace that waits for it (see _jail.enter).
USERNS_OTHER_TASKS = 2
PROGRAM = "main.py"
WORKDIR = "work"
NAMESPACE_TMP = "/tmp"
NAMESPACE_WRITABLE = (NAMESPACE_TMP, "/dev/shm")  # all a program can write to in the namespaces
READ_CHUNK = 1 << 16
POLL_S = 0.05  # how often a running job's pipes are read
F_SETPIPE_SZ = 1031
TIMEOUT_SIGNALS = (signal.SIGPROF, signal.SIGXCPU)
_STREAMS = ()  # the jobs' stdin, stdout and stderr (see _warm_up)
_in_user_namespace = False  # set once, by main
_libc = ctypes.CDLL(None, use_errno=True)


def main() -> None:
    global _in_user_namespace
    config = _read_frame()
    if config is None:
        return
    namespaces = config["isolation"] != "none"
    if namespaces:
        try:
            _enter_namespaces(config)
        except OSError as exc:
            _write_frame({"error": str(exc)})
            return
    _in_user_namespace = config["isolation"] == "user"
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no handler: see the module docstring
    _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of the jobs become this process's children
    _prctl(PR_SET_DUMPABLE, 0)  # same-uid processes cannot open /proc/<pid>/fd or ptrace it
    _prctl(PR_SET_NO_NEW_PRIVS, 1)  # inherited by every job: an exec'd setuid program gains nothing
    base = NAMESPACE_TMP if namespaces else config["root"]
    _write_frame({"error": None})
    _warm_up()
    batch = None
    while (request := _read_frame()) is not None:
        kind = request[0]
        if kind == "begin":
            batch = _begin(base, namespaces, *request[1:])
        elif kind == "job":
            _write_frame(_run_job(*batch, request[1:]) if batch is not None else None)
        elif kind == "end" and batch is not None:
            _end(base, namespaces)
            batch = None


def _enter_namespaces(config: dict) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    try:
        import _jail
    finally:
        sys.path.remove(here)
    if config["uid"] >= 0:  # root without CAP_SYS_ADMIN: a user namespace of an unprivileged uid
        os.setgroups([])
        os.setgid(config["uid"])
        os.setuid(config["uid"])
        _prctl(PR_SET_DUMPABLE, 1)  # a changed uid cleared it: /proc/self/uid_map would be root's
    _jail.enter(config["plan"], config["root"], config["tmp_mb"], config["isolation"] == "user")


def _read_frame():
    """The next request, or None when the caller has closed the pipe."""
    header = _read_exactly(4)
    if len(header) < 4:
        return None
    return marshal.loads(_read_exactly(int.from_bytes(header, "big")))


def _read_exactly(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _write_frame(value) -> None:
    data = marshal.dumps(value)
    view = memoryview(len(data).to_bytes(4, "big") + data)
    while view:
        view = view[os.write(1, view) :]


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}, {value}) failed")


def _warm_up() -> None:
    """Do once here what every job would otherwise do after its fork, paying for the copies
    of the pages it touches: the ``exit``/``quit`` builtins (``-S`` skips site, which defines
    them) and the program's standard streams, made exactly as a job needs them (fd 0 a
    memfd, fds 1 and 2 pipes, as :func:`_run_job` sets them up). Then freeze the heap, so
    that the jobs' garbage collections skip (and so do not copy) this process's objects."""
    global _STREAMS
    import builtins

    for name in ("exit", "quit"):
        setattr(builtins, name, sys.exit)
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    stdin_fd, (read_end, write_end) = os.memfd_create("stdin"), os.pipe()
    for target, fd in enumerate((stdin_fd, write_end, write_end)):
        os.dup2(fd, target)
    _STREAMS = (
        open(0, encoding="utf-8", closefd=False),
        open(1, "w", encoding="utf-8", closefd=False),
        open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False),
    )
    for target, fd in enumerate(saved):
        os.dup2(fd, target)
    for fd in (*saved, stdin_fd, read_end, write_end):
        os.close(fd)
    gc.freeze()


def _begin(base: str, namespaces: bool, source: str, spec: dict) -> tuple:
    """Create the batch's work directory with the program in it and compile the program
    once for all its jobs (a compile error is kept, and raised in each job); return the
    batch state."""
    if namespaces and _libc.unshare(CLONE_NEWIPC) != 0:  # the batch's own SysV IPC and mqueues
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWIPC) failed")
    workdir = os.path.join(base, WORKDIR)
    os.mkdir(workdir, 0o700)
    with open(os.path.join(workdir, PROGRAM), "w", encoding="utf-8") as file:
        file.write(source)
    if spec["uid"] >= 0:
        os.chown(workdir, spec["uid"], spec["uid"])
    os.chdir(workdir)
    try:
        code = compile(source, PROGRAM, "exec")
    except BaseException as exc:  # SyntaxError, ValueError (a null byte), MemoryError...
        code = exc
    return spec, code


def _end(base: str, namespaces: bool) -> None:
    """Delete what the batch wrote: its work directory; with namespaces, all of /tmp and /dev/shm."""
    os.chdir(base)
    if namespaces:
        paths = [os.path.join(directory, name) for directory in NAMESPACE_WRITABLE for name in os.listdir(directory)]
    else:
        paths = [os.path.join(base, WORKDIR)]
    for path in paths:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _run_job(spec: dict, code, job: tuple) -> dict:
    """Run one job; return its record: status, exit code, output, cpu and wall time."""
    stdin_text, call, args = job
    stdin_fd = os.memfd_create("stdin")
    os.write(stdin_fd, stdin_text.encode("utf-8"))
    os.lseek(stdin_fd, 0, os.SEEK_SET)
    pipes = [os.pipe2(os.O_NONBLOCK) for _ in range(3 if call is not None else 2)]
    for _, write_end in pipes:
        os.set_blocking(write_end, True)
        with contextlib.suppress(OSError):  # above the system's maximum: the pipe stays smaller
            fcntl.fcntl(write_end, F_SETPIPE_SZ, spec["output"] + 1)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _become_program(spec, code, call, args, stdin_fd, [w for _, w in pipes])
    os.close(stdin_fd)
    for _, write_end in pipes:
        os.close(write_end)
    readers = [r for r, _ in pipes]
    captured, reason = _collect(pid, readers, started + spec["wall"], spec["output"])
    if reason is not None:
        _kill(pid)
    _, wait_status, usage = os.wait4(pid, 0)
    _kill_descendants()
    for fd in readers:  # every writer is dead now: this drains to EOF
        _drain(fd, captured[fd], spec["output"])
        os.close(fd)
    if reason is None and any(len(buf) > spec["output"] for buf in captured.values()):
        reason = "output_limit"
    cpu = usage.ru_utime + usage.ru_stime
    stdout, stderr = (bytes(captured[fd][: spec["output"]]) for fd in readers[:2])
    returned = (bytes(captured[readers[2]][: spec["output"]]) or None) if call is not None else None
    return {
        "status": reason or _status(wait_status, cpu, spec["cpu"], stderr),
        "exit_code": os.waitstatus_to_exitcode(wait_status),
        "stdout": stdout,
        "stderr": stderr,
        "returned": returned,
        "cpu": cpu,
        "wall": time.monotonic() - started,
    }


def _collect(pid: int, readers: list, deadline: float, cap: int) -> tuple:
    """Wait until the job exits, the deadline passes or its output passes ``cap``.

    Returns the buffers by fd and the reason the job must be stopped (``None`` if it exited).
    The pipes are read every ``POLL_S`` rather than as data arrives: they hold more than
    ``cap`` bytes, so a job that prints within the cap wakes this process once, at its exit.
    """
    captured = {fd: bytearray() for fd in readers}
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return captured, "timeout"
            exited = select.select([pidfd], [], [], min(remaining, POLL_S))[0]
            for fd in readers:
                _drain(fd, captured[fd], cap)
            if any(len(buf) > cap for buf in captured.values()):
                return captured, "output_limit"
            if exited:
                return captured, None
    finally:
        os.close(pidfd)


def _drain(fd: int, buf: bytearray, cap: int) -> None:
    """Append what the non-blocking ``fd`` holds to ``buf``, keeping at most cap+1 bytes."""
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            return
        if len(buf) <= cap:
            buf += chunk[: cap + 1 - len(buf)]


def _status(wait_status: int, cpu: float, cpu_limit: float, stderr: bytes) -> str:
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        if sig in TIMEOUT_SIGNALS or (sig == signal.SIGKILL and cpu >= cpu_limit):
            return "timeout"
        return "killed"
    if os.WEXITSTATUS(wait_status) == 0:
        return "ok"
    last_line = stderr.rstrip().rpartition(b"\n")[2]
    return "memory_limit" if last_line.startswith(b"MemoryError") else "runtime_error"


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _kill_descendants() -> None:
    """SIGKILL and reap every remaining descendant.

    As a subreaper, this process inherits every orphan of the job, so killing its own
    children until none is left kills the job's whole process tree, including processes
    that left the job's session or process group.
    """
    me = os.getpid()
    children = f"/proc/{me}/task/{me}/children"
    while True:
        with open(children) as file:
            pids = [int(pid) for pid in file.read().split()]
        for pid in pids:
            _kill(pid)
        try:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if reaped == 0:
            time.sleep(0.0005)


# --- in the forked child -----------------------------------------------------------------


def _become_program(spec, code, call, args, stdin_fd, write_ends) -> None:
    """Turn this forked child into the untrusted program; never returns."""
    exit_code = 1
    try:
        os.setpgid(0, 0)  # a group of its own; not setsid, which costs an autogroup per job
        for target, fd in enumerate([stdin_fd, *write_ends]):
            os.dup2(fd, target)
        os.closerange(len(write_ends) + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        _confine(spec)
        exit_code = _run_program(code, call, args)
    except BaseException as exc:  # a failure of the setup itself
        os.write(2, f"sandbox setup failed: {exc!r}\n".encode())
    os._exit(exit_code)


def _confine(spec: dict) -> None:
    """Apply the resource limits and drop to the sandbox user (when running as root), or
    drop every capability (in a user namespace, where the supervisor holds them all)."""
    cpu_seconds = int(-(-spec["cpu"] // 1))  # RLIMIT_CPU counts whole seconds: round up
    processes = spec["processes"]
    if _in_user_namespace:
        processes += USERNS_OTHER_TASKS
    elif spec["uid"] < 0:  # no uid of its own: the limit counts all of this user's tasks
        processes += _count_tasks(os.getuid())
    limits = {
        resource.RLIMIT_CPU: (cpu_seconds, cpu_seconds + 1),  # SIGXCPU, then SIGKILL
        resource.RLIMIT_AS: (spec["memory"],) * 2,
        resource.RLIMIT_FSIZE: (spec["file_size"],) * 2,
        resource.RLIMIT_NPROC: (processes,) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    for which, value in limits.items():
        resource.setrlimit(which, value)
    if spec["uid"] >= 0:
        os.setgroups([])
        os.setgid(spec["uid"])
        os.setuid(spec["uid"])
    if _in_user_namespace:
        _drop_capabilities()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in ``python main.py``
    signal.setitimer(signal.ITIMER_PROF, spec["cpu"])  # precise CPU limit: SIGPROF


def _drop_capabilities() -> None:
    """Empty this process's effective, permitted and inheritable capability sets."""
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    if _libc.capset(header, (ctypes.c_uint32 * 6)()) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def _count_tasks(uid: int) -> int:
    """Tasks (threads) owned by ``uid``: what RLIMIT_NPROC compares against."""
    count = 0
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):  # the process may be gone already
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
    return count


def _run_program(code, call, args) -> int:
    """Run the compiled program like ``python main.py`` would (or load it and call
    ``call(*args)``, writing the JSON of the result to fd 3); return the exit code.
    ``code`` is the exception compiling it raised, if it did."""
    sys.stdin, sys.stdout, sys.stderr = _STREAMS
    sys.argv = [PROGRAM]
    module = type(sys)("__main__" if call is None else "solution")
    module.__file__ = PROGRAM
    sys.modules[module.__name__] = module
    try:
        if isinstance(code, BaseException):
            raise code
        exec(code, module.__dict__)
        if call is not None:
            _call(module, call, args)
        exit_code = 0
    except SystemExit as exc:
        exit_code = _exit_code(exc)
    except BaseException as exc:
        _print_exception(exc)
        exit_code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            exit_code = exit_code or 1
    return exit_code


def _call(module, name: str, args: list) -> None:
    """Call the program's function ``name`` (or ``Solution().name``) and write the result."""
    function = getattr(module, name, None)
    solution_class = getattr(module, "Solution", None)
    if function is None and isinstance(solution_class, type):
        function = getattr(solution_class(), name, None)
    if not callable(function):
        raise NameError(f"the program defines no function {name!r}")
    result = json.dumps(function(*args), default=repr)
    with open(3, "w", encoding="utf-8") as channel:
        channel.write(result)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _print_exception(exc: BaseException) -> None:
    """Print the traceback as the interpreter would, without the supervisor's frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != PROGRAM:
        tb = tb.tb_next
    try:
        sys.stderr.write("".join(traceback.format_exception(type(exc), exc, tb)))
    except BaseException:  # e.g. MemoryError again: at least name the exception
        os.write(2, f"\n{type(exc).__name__}\n".encode())


if __name__ == "__main__":
    main()

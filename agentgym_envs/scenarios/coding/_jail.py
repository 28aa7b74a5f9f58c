"""Namespaces for the sandbox supervisor: its own network, mount, pid, IPC and UTS namespaces,
and a root filesystem that holds only a read-only Python standard library.

Imported by ``_supervisor.py`` (stdlib only, like it) before it serves jobs. :func:`enter`
creates the namespaces either as root (``CAP_SYS_ADMIN``) or, with ``user_namespace``, inside
a new user namespace first (no privilege needed where the kernel allows unprivileged user
namespaces): the caller's uid and gid are then the only ones mapped, each to itself. It
raises ``OSError`` when the kernel refuses, so the caller can try another way or refuse to
run; a refused ``unshare`` changes nothing.

The new root is a small tmpfs, read-only once built, holding:

* the directories of ``plan["binds"]`` (the interpreter's stdlib and lib-dynload, the
  directories of the shared libraries its extension modules load), bound read-only at the
  same paths, with ``plan["masks"]`` (site-packages directories inside them) covered by an
  empty read-only tmpfs; the parents of these paths exist but hold nothing else;
* ``/dev`` with ``null``, ``zero``, ``full``, ``random`` and ``urandom``;
* ``/proc`` of the new pid namespace, mounted ``hidepid=2``: a program sees only its own
  processes;
* ``/tmp`` and ``/dev/shm``, tmpfs of ``tmp_mb`` megabytes each: the only writable places.

No executable is there: a program can fork but not ``exec`` anything (no shell, no setuid
helper). The network namespace has only the loopback interface, brought up.
"""

import ctypes
import fcntl
import os
import platform
import select
import signal
import socket
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
DEVICES = ("null", "zero", "full", "random", "urandom")
DEV_LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
             "stderr": "/proc/self/fd/2"}  # fmt: skip
WRITABLE = ("/tmp", "/dev/shm")
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
IFREQ = "16sh22x"  # struct ifreq: the interface name, then the flags in the union

_libc = ctypes.CDLL(None, use_errno=True)


def enter(plan: dict, root: str, tmp_mb: int, user_namespace: bool) -> None:
    """Move this process into new namespaces, ``root`` (an empty directory) becoming its
    root filesystem (see the module docstring); with ``user_namespace``, into a new user
    namespace first. Returns in a forked child that is pid 1 of the new pid namespace; the
    calling process stays outside, waits for it and exits with its status."""
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
    if user_namespace:
        uid, gid = os.getuid(), os.getgid()
        _check(_libc.unshare(CLONE_NEWUSER | flags), "unshare")
        _map_ids(uid, gid)
    else:
        _check(_libc.unshare(flags), "unshare")
    parent_alive, parent_holds = os.pipe()  # EOF on the first end once the parent is gone
    child = os.fork()  # the first child of the caller is pid 1 of the new pid namespace
    if child:
        os.close(parent_alive)
        _wait_and_exit(child)
    os.close(parent_holds)
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if select.select([parent_alive], [], [], 0)[0]:  # the parent died before the line above
        os._exit(1)
    os.close(parent_alive)
    _build_root(plan, root, tmp_mb)
    _pivot_into(root)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _check(_libc.sethostname(b"sandbox", 7), "sethostname")
    _loopback_up()


def _map_ids(uid: int, gid: int) -> None:
    """Map ``uid`` and ``gid`` to themselves: the one-line maps an unprivileged process may
    write for itself (``setgroups`` must be denied before the gid map)."""
    for name, line in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(line)


def _wait_and_exit(child: int) -> None:
    """The part outside the namespaces: hand the pipes to the child and mirror its exit."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(null, fd)
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _build_root(plan: dict, root: str, tmp_mb: int) -> None:
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for path in plan["binds"]:
        _bind_read_only(path, root + path)
    for path in plan["masks"]:
        if os.path.isdir(root + path):  # inside a bound directory: it exists unless a link leads out
            _mount("tmpfs", root + path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755,size=4k")
    for link, target in plan["links"].items():
        os.symlink(target, root + link)
    os.mkdir(root + "/dev", 0o755)
    for device in DEVICES:
        open(f"{root}/dev/{device}", "w").close()
        _bind(f"/dev/{device}", f"{root}/dev/{device}", MS_NOSUID | MS_NOEXEC)
    for name, target in DEV_LINKS.items():
        os.symlink(target, f"{root}/dev/{name}")
    os.mkdir(root + "/proc", 0o555)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    for path in WRITABLE:
        os.mkdir(root + path, 0o1777)
        _mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={tmp_mb}m")


def _bind_read_only(source: str, target: str) -> None:
    os.makedirs(target, 0o755, exist_ok=True)
    _bind(source, target, MS_RDONLY | MS_NOSUID | MS_NODEV)


def _bind(source: str, target: str, flags: int) -> None:
    """Bind ``source`` at ``target``, then remount it with ``flags`` added to the ``nosuid``,
    ``nodev`` and ``noexec`` it already has (in a user namespace those are locked: a remount
    without them fails)."""
    _mount(source, target, None, MS_BIND)
    kept = os.statvfs(target).f_flag & (MS_NOSUID | MS_NODEV | MS_NOEXEC)  # ST_* equal MS_*
    _mount(None, target, None, MS_REMOUNT | MS_BIND | flags | kept)


def _pivot_into(root: str) -> None:
    """Make ``root`` the root directory and detach the old one (the host's) entirely."""
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(f"pivot_root: unknown system call number on {platform.machine()}")
    os.chdir(root)
    _check(_libc.syscall(number, b".", b"."), "pivot_root")  # the old root is now stacked under "."
    _check(_libc.umount2(b".", MNT_DETACH), "umount2")
    os.chdir("/")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        name = b"lo"
        flags = struct.unpack(IFREQ, fcntl.ioctl(sock, SIOCGIFFLAGS, struct.pack(IFREQ, name, 0)))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack(IFREQ, name, flags | IFF_UP))


def _mount(source, target, fstype, flags: int, data: str | None = None) -> None:
    def c(text):
        return None if text is None else os.fsencode(text)

    _check(_libc.mount(c(source), c(target), c(fstype), flags, c(data)), f"mount {target}")


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")

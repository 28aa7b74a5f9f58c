"""Mutation smoke test: plant realistic bugs one at a time and check that the tests catch them.

Each mutation replaces one exact snippet of one file and names the tests that should fail.
The script copies the repository (``--root``, default: this one) to a temporary folder, runs
the named tests on the unmutated copy (they must pass), then per mutation: applies it, runs its
tests, and restores the file. A mutation is *caught* when its tests fail, *survived* when they
pass; a snippet that is not in the file exactly once is reported as ``snippet not found`` /
``snippet ambiguous``, never skipped silently. Run on demand, not in CI (minutes)::

    python benchmarks/mutation_smoke.py                       # every mutation, report to results/
    python benchmarks/mutation_smoke.py --only ppo-ratio-clip-removed --report ''
    python benchmarks/mutation_smoke.py --root /path/to/other/checkout --list
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REPORT = REPO / "benchmarks" / "results" / "mutation_smoke.md"
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "runs", "__pycache__", ".pytest_cache", ".hypothesis",
                                     "*.egg-info", "build")


@dataclass(frozen=True)
class Mutation:
    """A planted bug: in ``file``, the exact text ``old`` becomes ``new``; ``tests`` (pytest
    paths or node ids) must then fail."""

    name: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]


M = Mutation
CS_GRADING = "tests/test_customer_support_grading.py"
TEAM_GRADING = "tests/multiagent/test_support_team_grading.py"
MATH_GRADING = "tests/math/test_math_grading_must_fail.py"
CODING_GRADING = "tests/coding/test_coding_grading_must_fail.py"
TAU2_FIXTURE = "tests/tau2/test_fixture_db.py"  # needs no external tau2 data
OBJECTIVES = "tests/trainers/test_objectives.py"  # PPO's and GRPO's objectives with exact values on hand-made inputs
LLM_GATE = "tests/llm/test_grpo_gate.py"  # llm-grpo on a task with a known optimum, and its objective by hand
BAD_TEXT_ACTIONS = "tests/test_env_contract.py::test_bad_text_action_is_error_observation_and_episode_goes_on"
MUTATIONS: tuple[Mutation, ...] = (
    # ---- the environment contract
    M("reward-sign", "agentgym_envs/core/rewards.py",
      "return self.correct_call if correct else self.incorrect_call",
      "return self.incorrect_call if correct else self.correct_call",
      ("tests/test_env_contract.py::test_repeating_a_correct_call_is_incorrect",
       "tests/test_env_contract.py::test_wrong_entity_kind_is_an_error_result_with_penalty")),
    M("success-reward-sign", "agentgym_envs/core/rewards.py",
      "reward = self.success * score", "reward = -self.success * score",
      ("tests/math/test_math_policies_and_rewards.py::test_default_rewards_are_the_answer_score_plus_small_shaping",)),
    M("argument-type-check", "agentgym_envs/core/tools.py",
      "    return isinstance(value, JSON_TYPES[json_type])\n",
      "    return True\n",
      (BAD_TEXT_ACTIONS,)),
    M("missing-argument-check", "agentgym_envs/core/tools.py",
      "                if arg.required:\n",
      "                if False:\n",
      (BAD_TEXT_ACTIONS,)),
    M("reliability-formula", "agentgym_envs/core/episode.py",
      '"tool_reliability": self.correct_calls / self.calls if self.calls else 0.0',
      '"tool_reliability": self.correct_calls / max(1, self.calls - self.invalid_calls) if self.calls else 0.0',
      ("tests/test_env_contract.py::test_tool_reliability_is_correct_calls_over_all_calls_invalid_ones_included",)),
    M("seeding-ignored", "agentgym_envs/core/env.py",
      "task = self.tasks.sample(self.np_random)",
      "task = self.tasks.sample(np.random.default_rng())",
      ("tests/test_determinism_and_modes.py::test_same_seed_same_trajectory_and_metrics",)),
    # ---- customer support and the support team
    M("refund-without-effect", "agentgym_envs/scenarios/customer_support/tools.py",
      '    world.effects.append(("refund", invoice_id, round(amount, 2)))\n',
      "",
      (CS_GRADING,)),
    M("refund-plan-wrong-invoice", "agentgym_envs/scenarios/customer_support/scenario.py",
      'duplicate = next(i for i in ticket.invoices if i["status"] == "duplicate")',
      'duplicate = next(i for i in ticket.invoices if i["status"] == "paid")',
      (CS_GRADING,)),
    M("reset-link-without-effect", "agentgym_envs/scenarios/customer_support/tools.py",
      '    world.effects.append(("reset_link", user_id))\n',
      "",
      (CS_GRADING,)),
    M("extra-effects-ignored", "agentgym_envs/scenarios/customer_support/scenario.py",
      "unexpected = {e for e in done - goal if e[0] not in BOOKKEEPING_EFFECTS}",
      "unexpected = set()",
      (CS_GRADING,)),
    M("earlier-priority-still-counts", "agentgym_envs/scenarios/customer_support/scenario.py",
      "done = _standing_effects(world.effects)", "done = set(world.effects)",
      (CS_GRADING,)),
    M("team-tool-holdings-ignored", "agentgym_envs/multiagent/env.py",
      "report = episode.call_text(action, allowed)",
      "report = episode.call_text(action, None)",
      ("tests/multiagent/test_support_team.py::test_a_tool_the_agent_does_not_hold_is_an_error_result",)),
    M("team-escalation-without-effect", "agentgym_envs/scenarios/customer_support/tools.py",
      '    world.effects.append(("escalate", team))\n',
      "",
      (TEAM_GRADING,)),
    # ---- math
    M("partial-credit-window", "agentgym_envs/scenarios/math/grading.py",
      "PARTIAL_WINDOW = 0.10", "PARTIAL_WINDOW = 0.20",
      (MATH_GRADING,)),
    M("exact-tolerance-too-loose", "agentgym_envs/scenarios/math/grading.py",
      "EXACT_TOLERANCE = 1e-9", "EXACT_TOLERANCE = 1e-3",
      (MATH_GRADING,)),
    M("range-sum-off-by-one", "agentgym_envs/scenarios/math/arithmetic.py",
      "    return n * (n + 1) // 2\n", "    return n * (n - 1) // 2\n",
      (MATH_GRADING,)),
    # ---- coding
    M("submit-judged-on-examples", "agentgym_envs/scenarios/coding/tools.py",
      "outcomes = world.judge.run(program, task.problem.hidden, task.hidden_digest)",
      "outcomes = world.judge.run(program, task.problem.examples, task.examples_digest)",
      (CODING_GRADING,)),
    M("solved-with-one-hidden-failure", "agentgym_envs/scenarios/coding/world.py",
      "return self.submission is not None and self.hidden_passed == len(self.submission)",
      "return self.submission is not None and self.hidden_passed >= len(self.submission) - 1",
      (CODING_GRADING,)),
    M("sandbox-memory-limit", "agentgym_envs/scenarios/coding/_supervisor.py",
      'resource.RLIMIT_AS: (spec["memory"],) * 2,',
      "resource.RLIMIT_AS: (resource.RLIM_INFINITY,) * 2,",
      ("tests/coding/test_coding_sandbox.py::test_memory_bomb_hits_the_memory_limit",)),
    # ---- tau2 (caught by the fixture databases alone)
    M("tau2-cancel-without-refund-entries", "agentgym_envs/scenarios/tau2/upstream/retail/tools.py",
      "    order.payment_history.extend(refunds)\n", "",
      (TAU2_FIXTURE,)),
    M("tau2-cancel-leaves-status", "agentgym_envs/scenarios/tau2/upstream/retail/tools.py",
      '    order.status = "cancelled"\n', "",
      (TAU2_FIXTURE,)),
    M("tau2-address-fields-swapped", "agentgym_envs/scenarios/tau2/upstream/retail/tools.py",
      'names = ("address1", "address2", "city", "country", "state", "zip")',
      'names = ("address1", "address2", "city", "state", "country", "zip")',
      (TAU2_FIXTURE,)),
    M("tau2-booking-keeps-seats", "agentgym_envs/scenarios/tau2/upstream/airline/tools.py",
      "status.available_seats[cabin] -= len(travellers)",
      "status.available_seats[cabin] -= 0",
      (TAU2_FIXTURE,)),
    M("tau2-certificate-kept", "agentgym_envs/scenarios/tau2/upstream/airline/tools.py",
      "            del user.payment_methods[payment.payment_id]\n",
      "            pass\n",
      (TAU2_FIXTURE,)),
    M("tau2-hash-unsorted-keys", "agentgym_envs/scenarios/tau2/upstream/store.py",
      "return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode(\"utf-8\")).hexdigest()",
      "return hashlib.sha256(json.dumps(data, default=str).encode(\"utf-8\")).hexdigest()",
      (TAU2_FIXTURE,)),
    M("tau2-record-fragments-unsorted", "agentgym_envs/scenarios/tau2/upstream/store.py",
      "    return json.dumps(record.to_dict(), sort_keys=True, default=str)\n",
      "    return json.dumps(record.to_dict(), default=str)\n",
      (TAU2_FIXTURE,)),
    M("tau2-db-never-compared", "agentgym_envs/scenarios/tau2/upstream/scoring.py",
      'components["DB"] = 1.0 if agent_db.same_content(changes) else 0.0',
      'components["DB"] = 1.0',
      (TAU2_FIXTURE,)),
    # ---- trainers (as the run-lifecycle refactor writes them)
    M("ppo-ratio-clip-removed", "trainers/torch_policy.py",
      "return torch.max(-advantages * ratio, -advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()",
      "return (-advantages * ratio).mean()",
      (OBJECTIVES,)),
    M("ppo-value-clip-removed", "trainers/ppo.py",
      "    clipped = old_values + torch.clamp(new_values - old_values, -clip_coef, clip_coef)\n",
      "    clipped = new_values\n",
      (OBJECTIVES,)),
    M("gae-lambda-ignored", "trainers/ppo.py",
      "advantages[t] = last = delta + gamma * gae_lambda * nonterminal * last",
      "advantages[t] = last = delta + gamma * nonterminal * last",
      (OBJECTIVES,)),
    M("gae-bootstraps-across-episode-ends", "trainers/ppo.py",
      "nonterminal = 1.0 - (next_done if t == len(rewards) - 1 else dones[t + 1])",
      "nonterminal = 1.0 - (next_done if t == len(rewards) - 1 else dones[t])",
      (OBJECTIVES,)),
    M("advantages-not-scaled", "trainers/ppo.py",
      "return (advantages - advantages.mean()) / (advantages.std() + 1e-8)",
      "return advantages - advantages.mean()",
      (OBJECTIVES,)),
    M("grpo-advantage-not-centred", "trainers/grpo.py",
      "centred = returns - returns.mean(-1, keepdims=True)",
      "centred = returns",
      (OBJECTIVES,)),
    M("ppo-optimizer-state-not-restored", "trainers/ppo.py",
      '        optimizer.load_state_dict(state["optimizer"])\n', "",
      ("tests/trainers/test_checkpoints.py::test_resumed_ppo_run_reproduces_the_uninterrupted_run",)),
    M("ppo-random-state-not-restored", "trainers/ppo.py",
      '        checkpoints.set_rng_state(state["rng"])\n', "",
      ("tests/trainers/test_checkpoints.py::test_resumed_ppo_run_reproduces_the_uninterrupted_run",)),
    M("grpo-optimizer-state-not-restored", "trainers/grpo.py",
      '        optimizer.load_state_dict(state["optimizer"])\n', "",
      ("tests/trainers/test_checkpoints.py::test_resumed_grpo_run_reproduces_the_uninterrupted_run",)),
    M("ppo-seed-ignored", "trainers/ppo.py",
      "next_obs_np, info = envs.reset(seed=run.seed)",
      "next_obs_np, info = envs.reset()",
      ("tests/trainers/test_checkpoints.py::test_resumed_ppo_run_reproduces_the_uninterrupted_run",)),
    # ---- the LLM GRPO gate: a learning run with a known optimum and the objective by hand
    M("llm-grpo-advantage-sign", "trainers/llm/grpo.py",
      "advantages.append(group_advantages(group_returns, config.scale_advantages))",
      "advantages.append(-group_advantages(group_returns, config.scale_advantages))",
      (LLM_GATE,)),
    M("llm-grpo-ratio-clip-removed", "trainers/llm/grpo.py",
      "loss = -torch.min(ratio * advantages, torch.clamp(ratio, low, high) * advantages)",
      "loss = -ratio * advantages",
      (LLM_GATE,)),
    M("llm-grpo-loss-mask-ignored", "trainers/llm/grpo.py",
      "masked = per_token * mask\n",
      "masked = per_token\n",
      (LLM_GATE,)),
    M("llm-grpo-env-tokens-sampled", "trainers/llm/grpo.py",
      "sampled[row, : length - 1] = torch.tensor(t.sampled[1:])",
      "sampled[row, : length - 1] = True",
      (LLM_GATE,)),
)


@dataclass
class Result:
    mutation: Mutation
    status: str  # caught | survived | timeout | error | snippet not found | snippet ambiguous | tests not found
    seconds: float = 0.0
    detail: str = ""


def pytest_command(tests: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider", *tests]


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[int | None, str, float]:
    """Run ``tests`` in ``copy`` (its own sources first on the path); return (exit code or None
    on timeout, the output's tail, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    # a session of its own, so that a timeout ends the tests' child processes too
    proc = subprocess.Popen(pytest_command(tests), cwd=copy, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, "", time.monotonic() - started
    return proc.returncode, output[-2000:], time.monotonic() - started


def check_imports_from(copy: Path) -> None:
    """Make sure the copy's packages, not an installed checkout, are the ones imported."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    probe = "import agentgym_envs, trainers; print(agentgym_envs.__file__); print(trainers.__file__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=env, capture_output=True, text=True, check=True)
    for path in out.stdout.split():
        if not Path(path).resolve().is_relative_to(copy.resolve()):
            raise SystemExit(f"the copy at {copy} imports {path}: mutations would not be tested")


def unplantable(root: Path, mutation: Mutation) -> tuple[str, str] | None:
    """Why ``mutation`` cannot be tried in ``root`` (status, detail), or None if it can: its
    snippet must occur exactly once and its tests must exist."""
    missing = [t for t in mutation.tests if not (root / t.split("::")[0]).exists()]
    if missing:
        return "tests not found", f"no {', '.join(missing)}"
    path = root / mutation.file
    count = path.read_text().count(mutation.old) if path.is_file() else 0
    if count != 1:
        return ("snippet not found" if count == 0 else "snippet ambiguous"), f"{mutation.file}: the snippet occurs {count} times"
    return None


def try_mutation(copy: Path, mutation: Mutation, timeout: float) -> Result:
    """Plant ``mutation`` in ``copy``, run its tests, restore the file."""
    problem = unplantable(copy, mutation)
    if problem is not None:
        status, detail = problem
        return Result(mutation, status, detail=detail)
    path = copy / mutation.file
    original = path.read_text()
    path.write_text(original.replace(mutation.old, mutation.new))
    try:
        code, tail, seconds = run_tests(copy, mutation.tests, timeout)
    finally:
        path.write_text(original)
    if code is None:
        return Result(mutation, "timeout", seconds, f"the tests ran past {timeout:.0f} s")
    status = {0: "survived", 1: "caught"}.get(code, "error")
    return Result(mutation, status, seconds, "" if code in (0, 1) else f"pytest exit code {code}: {tail[-600:]}")


def report(results: list[Result], command: str, baseline_s: float, note: str) -> str:
    planted = [r for r in results if r.status in ("caught", "survived", "timeout", "error")]
    caught = sum(r.status == "caught" for r in results)
    lines = [
        "# Mutation smoke test",
        "",
        f"Command: `{command}`",
        "",
        *([note, ""] if note else []),
        f"Score: **{caught}/{len(planted)} planted bugs caught**"
        + (f" ({len(results) - len(planted)} of {len(results)} mutations could not be planted: see the table)"
           if len(planted) < len(results) else f" (all {len(results)} mutations planted)")
        + f". The named tests passed on the unmutated copy in {baseline_s:.0f} s.",
        "",
        "| mutation | file | result | seconds | tests |",
        "|---|---|---|---:|---|",
    ]
    for r in results:
        tests = ", ".join(f"`{t}`" for t in r.mutation.tests)
        status = f"**{r.status}**" if r.status != "caught" else r.status
        lines.append(f"| {r.mutation.name} | `{r.mutation.file}` | {status} | {r.seconds:.1f} | {tests} |")
    problems = [r for r in results if r.detail]
    if problems:
        lines += ["", "Details:", ""] + [f"- {r.mutation.name}: {r.detail}" for r in problems]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the repository tree to mutate (copied first)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and whether their snippets are found")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per mutation's tests")
    parser.add_argument("--report", default=str(DEFAULT_REPORT), help="markdown report path ('' for none)")
    parser.add_argument("--note", default="", help="a paragraph for the report (e.g. what --root holds)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    selected = [m for m in MUTATIONS if not args.only or m.name in args.only]
    unknown = set(args.only or ()) - {m.name for m in MUTATIONS}
    if unknown:
        parser.error(f"unknown mutation(s) {sorted(unknown)}; see --list")
    if args.list:
        for m in selected:
            problem = unplantable(root, m)
            print(f"{m.name:36s} {m.file:55s} {'ok' if problem is None else problem[1]}")
        return 0

    with tempfile.TemporaryDirectory(prefix="mutation_smoke_") as scratch:
        copy = Path(scratch) / "repo"
        shutil.copytree(root, copy, ignore=COPY_IGNORE)
        check_imports_from(copy)
        all_tests = tuple(dict.fromkeys(t for m in selected if unplantable(copy, m) is None for t in m.tests))
        print(f"baseline: {len(all_tests)} test paths on the unmutated copy of {root} ...", flush=True)
        code, tail, baseline_s = run_tests(copy, all_tests, args.timeout * 2)
        if code != 0:
            print(tail, file=sys.stderr)
            raise SystemExit(f"the named tests do not pass on the unmutated tree (exit code {code}): fix that first")
        results = []
        for mutation in selected:
            result = try_mutation(copy, mutation, args.timeout)
            results.append(result)
            print(f"{mutation.name:36s} {result.status:18s} {result.seconds:6.1f} s", flush=True)
    command = "python benchmarks/mutation_smoke.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    text = report(results, command.strip(), baseline_s, args.note)
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    return 0 if all(r.status == "caught" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""The SFT corpus of the project's chat model: augmented train-split tasks played by the
scripted expert.

A small model that learns from the generated train split memorises it: the same few names,
emails, plans and two-digit numbers recur, so it writes them back instead of reading them
from the conversation. This module writes task files (the envs' ``task_file`` JSONL) drawn
from the train templates and phrasings only, with

- values the model cannot memorise: numbers of 1-4 digits (the digit count drawn uniformly),
  synthesised names, emails, user and invoice ids, plans, prices, dates, months, endpoints
  and migration sources (random strings, never the test split's pools);
- perturbed phrasings: the words of a template around its placeholders are dropped, swapped
  for words of other prompts or joined by random ones (the loss is on the assistant's tokens
  only, so a noisy prompt costs nothing and teaches that the values, not the wording, decide
  the call); a share of tasks keeps the template's wording, and a share has every word
  replaced by a random one, where the values alone decide the calls (the kinds of values a
  ticket holds, how many numbers a problem gives), as they must on the test split's unseen
  wording;
- random arithmetic shapes in half the easy math problems (the expert copies the written
  expression into ``evaluate_expression``: on a few fixed shapes the model learnt the shapes
  and wrote them back, not the expression it was shown).

The scripted expert then plays every task in text mode (:class:`TrajectoryRecorder`, OpenAI
chat JSONL). Everything is a pure function of the seed.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agentgym_envs.evaluation import ExpertPolicy, run_episode
from agentgym_envs.scenarios.customer_support import phrasings as support_pools
from agentgym_envs.scenarios.customer_support.tickets import API_ISSUES, KIND_DIFFICULTY, Ticket, ticket_logs
from agentgym_envs.scenarios.math.arithmetic import SOLUTION_FUNCTIONS, evaluate
from agentgym_envs.scenarios.math.problems import MathProblem
from agentgym_envs.scenarios.math.templates import NAMES, TEMPLATES, Draw, Redraw, Template, uniform
from agentgym_envs.wrappers.recorder import TrajectoryRecorder

MATH_ENV = "AgentGym/Math-v0"
SUPPORT_ENV = "AgentGym/CustomerSupport-v0"
MAX_DIGITS = 4  # math numbers have 1..MAX_DIGITS digits (train: 2..99, test: 100..999)


@dataclass(frozen=True)
class Augment:
    """How a template's wording is perturbed: per word, the chance to drop it, to swap it for
    a word of another prompt, to insert a random word after it; ``clean`` is the share of
    tasks whose wording is left as written, ``scramble`` the share whose every word is
    replaced by a random one (placeholders kept); ``shapes`` the share of easy Math-v0 tasks
    whose written expression is a random arithmetic shape instead of the template's."""

    drop: float = 0.1
    swap: float = 0.1
    insert: float = 0.05
    clean: float = 0.3
    scramble: float = 0.2
    shapes: float = 0.5


NO_AUGMENT = Augment(0.0, 0.0, 0.0, 1.0, 0.0, 0.0)

_CONSONANTS = "bcdfghjklmnprstvwz"
_VOWELS = "aeiou"


def word(rng: random.Random, syllables: tuple[int, int] = (1, 3)) -> str:
    """A random lowercase word: half the time pronounceable (consonant-vowel syllables), half
    the time letters drawn uniformly, so that a model cannot guess a name or an address from
    the syllable pattern and must copy it (on pronounceable words alone, the tiny model wrote
    ``sen.sil16@emama.com`` for ``sven.silva16@example.com``)."""
    count = rng.randint(*syllables)
    if rng.random() < 0.5:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(2 * count + rng.randint(0, 1)))
    text = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(count))
    return text + (rng.choice(_CONSONANTS) if rng.random() < 0.5 else "")


def name_word(rng: random.Random, avoid: Sequence[str] = ()) -> str:
    """A capitalised random word that is none of ``avoid``."""
    while True:
        text = word(rng).capitalize()
        if text not in avoid:
            return text


def perturb(template: str, vocabulary: Sequence[str], rng: random.Random, augment: Augment) -> str:
    """``template`` with its words dropped, swapped and joined by others as ``augment`` says;
    a word holding a placeholder (``{...}``) is always kept as written."""
    draw = rng.random()
    if draw < augment.clean:
        return template
    if draw < augment.clean + augment.scramble:
        return " ".join(token if "{" in token else word(rng) for token in template.split(" "))
    out: list[str] = []
    for token in template.split(" "):
        if "{" in token:
            out.append(token)
        elif rng.random() < augment.drop:
            pass
        elif rng.random() < augment.swap:
            out.append(rng.choice(vocabulary))
        else:
            out.append(token)
        if rng.random() < augment.insert:
            out.append(rng.choice(vocabulary))
    return " ".join(out)


def _vocabulary(texts: Sequence[str]) -> list[str]:
    return sorted({w for text in texts for w in text.split() if "{" not in w and not any(c.isdigit() for c in w)})


def train_vocabulary() -> list[str]:
    """The words of every train-split math template and ticket phrasing (no placeholders)."""
    texts = [t.text for t in TEMPLATES if t.split == "train"]
    texts += [p for kinds in support_pools.PHRASINGS.values() for p in kinds["train"]]
    return _vocabulary(texts)


# ---------------------------------------------------------------------------------- math


class WideDraw(Draw):
    """Numbers of 1..MAX_DIGITS digits, the digit count drawn uniformly (at least 2)."""

    def __init__(self, rng: np.random.Generator) -> None:
        super().__init__(rng, 2, 10**MAX_DIGITS - 1)

    def number(self) -> int:
        digits = int(self.rng.integers(1, MAX_DIGITS + 1))
        return int(self.rng.integers(max(self.low, 10 ** (digits - 1)), 10**digits))


OPERATORS = {"+": 1, "-": 1, "*": 2}  # operator: precedence


def random_shape(rng: random.Random, operands: tuple[int, int] = (2, 4)) -> str:
    """A random arithmetic expression over placeholders ``{a}``, ``{b}``, ... (+ - * on a random
    binary tree, parenthesised only where precedence needs it, as people write them): what an
    easy problem shows and the expert copies into ``evaluate_expression``."""
    nodes: list[tuple[str, int]] = [(f"{{{name}}}", 3) for name in string.ascii_lowercase[:rng.randint(*operands)]]
    while len(nodes) > 1:
        at = rng.randrange(len(nodes) - 1)
        (left, left_rank), (right, right_rank) = nodes[at], nodes[at + 1]
        operator = rng.choice(tuple(OPERATORS))
        rank = OPERATORS[operator]
        left = left if left_rank >= rank else f"({left})"
        # a - (b + c) and a - (b - c) need theirs; a + (b + c) is written a + b + c
        right = right if right_rank > rank or (right_rank == rank and operator != "-") else f"({right})"
        nodes[at:at + 2] = [(f"{left} {operator} {right}", rank)]
    return nodes[0][0]


def shaped(template: Template, rng: random.Random) -> Template:
    """``template`` (an easy one) with a random expression shape as its solution."""
    solution = random_shape(rng)
    names = re.findall(r"{(\w+)}", solution)
    return replace(template, name=template.name + "-shape", solution=solution, draw=uniform(*names))


def math_task(template: Template, index: int, rng: np.random.Generator, prng: random.Random,
              vocabulary: Sequence[str], augment: Augment) -> dict[str, Any] | None:
    """One task-file line from a train ``template`` (None: no valid numbers drawn)."""
    draw = WideDraw(rng)
    if "{expression}" in template.text and prng.random() < augment.shapes:
        template = shaped(template, prng)
    for _ in range(100):
        try:
            values = template.draw(draw)
        except Redraw:
            continue
        solution = template.solution.format(**values)
        steps: list[Any] = []
        answer = evaluate(solution, SOLUTION_FUNCTIONS, steps)
        if answer in values.values() or not all(isinstance(s.result, int) and s.result > 0 for s in steps):
            continue
        # a word problem's wording decides how its numbers combine: never scrambled
        wording = augment if template.difficulty != "hard" else replace(augment, scramble=0.0)
        text = perturb(template.text, vocabulary, prng, wording)
        name = name_word(prng, NAMES["test"])
        question = text.format(expression=solution, name=name, **values)
        task = {"task_id": f"aug-{index}", "question": question, "answer": answer, "solution": solution,
                "difficulty": template.difficulty, "template": template.name}
        if "{expression}" in template.text:
            task["expression"] = solution
        return MathProblem.from_dict(task).to_dict()
    return None


def math_tasks(count: int, seed: int = 0, augment: Augment = Augment()) -> list[dict[str, Any]]:
    """``count`` Math-v0 task-file lines: train templates taken in turn, wide numbers,
    random names, perturbed wording."""
    rng, prng = np.random.default_rng([7, seed]), random.Random(f"math-{seed}")
    templates = [t for t in TEMPLATES if t.split == "train"]
    vocabulary = train_vocabulary()
    tasks: list[dict[str, Any]] = []
    index = 0
    while len(tasks) < count:
        task = math_task(templates[index % len(templates)], index, rng, prng, vocabulary, augment)
        index += 1
        if task is not None:
            tasks.append(task)
    return tasks


# ------------------------------------------------------------------------ customer support


def _test_values() -> set[str]:
    """Every value of the test split's pools (what an augmented ticket must never show)."""
    P = support_pools
    pools = [P.FIRST_NAMES["test"], P.LAST_NAMES["test"], P.EMAIL_DOMAINS["test"], tuple(P.PLANS["test"]),
             P.MONTHS["test"], P.ENDPOINTS["test"], P.MIGRATION_SOURCES["test"]]
    return {value for pool in pools for value in pool}


TEST_VALUES = _test_values()
TLDS = ("com", "io", "net", "org", "dev", "co", "app", "info", "biz", "de", "fr", "uk", "test")


def _fresh(make: Callable[[], str]) -> str:
    while True:
        value = make()
        if value not in TEST_VALUES:
            return value


def _digits(rng: random.Random) -> str:
    """A 3-6 digit id (the digit count drawn uniformly) outside the test split's id range."""
    low, high = support_pools.ID_RANGES["test"]
    while True:
        digits = rng.randint(3, 6)
        number = rng.randint(10 ** (digits - 1), 10**digits - 1)
        if not low <= number <= high:
            return str(number)


def email(rng: random.Random, first: str, last: str) -> str:
    """A random address: ``first.last<nn>@domain`` as the generator writes them, or random
    letters, digits and separators. Half the domains end in a random word instead of a common
    ending, so that the model copies an address to its last letter rather than stopping at an
    ending it knows (on common endings alone the tiny model never stopped after one it had
    not seen: ``holdout.examplerlerl...`` for ``holdout.example``)."""
    domain = _fresh(lambda: f"{word(rng, (1, 4))}.{rng.choice(TLDS) if rng.random() < 0.5 else word(rng)}")
    if rng.random() < 0.5:
        local = f"{first.lower()}{rng.choice('._-')}{last.lower()}{rng.randint(1, 999)}"
    else:
        parts = [word(rng, (1, 2)) for _ in range(rng.randint(1, 3))]
        local = "".join(p + rng.choice("._-") for p in parts[:-1]) + parts[-1]
        if rng.random() < 0.6:
            local += str(rng.randint(0, 9999))
    return f"{local}@{domain}"


def month(rng: random.Random) -> str:
    return _fresh(lambda: f"{rng.randint(2015, 2035)}-{rng.randint(1, 12):02d}")


def price(rng: random.Random) -> float:
    """A plan price of 1-4 digits with whole, half or random cents."""
    whole = rng.randint(1, 10 ** rng.randint(1, 4) - 1)
    cents = rng.choice((0, 0, 50, 99, rng.randint(1, 99)))
    return round(whole + cents / 100, 2)


def source(rng: random.Random) -> str:
    return _fresh(lambda: rng.choice(("{W}", "{W}", "a {W} export", "an {W} dump", "the {W} backup"))
                  .format(W=name_word(rng) if rng.random() < 0.7 else word(rng).upper()))


def support_task(index: int, rng: random.Random, vocabulary: Sequence[str], augment: Augment) -> dict[str, Any]:
    """One CustomerSupport-v0 task-file line: a train phrasing with synthesised values."""
    kind = rng.choice(tuple(KIND_DIFFICULTY))
    first, last = (_fresh(lambda: name_word(rng)) for _ in range(2))
    plan = _fresh(lambda: name_word(rng))
    amount = price(rng)
    customer = {"user_id": f"u{_digits(rng)}", "name": f"{first} {last}", "email": email(rng, first, last),
                "plan": plan}
    months: list[str] = []
    while len(months) < rng.randint(2, 3):
        value = month(rng)
        if value not in months:
            months.append(value)
    invoices = [{"invoice_id": f"INV-{_digits(rng)}", "amount": amount, "date": f"{m}-{rng.randint(1, 28):02d}",
                 "status": "paid", "description": f"{plan} plan, {m}"} for m in sorted(months)]
    latest = invoices[-1]
    issue = rng.choice(API_ISSUES) if kind == "api_integration" else None
    endpoint = _fresh(lambda: f"/v{rng.randint(1, 4)}/{word(rng)}{rng.choice(('', 's', '_' + word(rng, (1, 2))))}")
    migration_source = source(rng)
    if kind == "refund_request":
        invoices.append({**latest, "invoice_id": f"INV-{_digits(rng)}", "status": "duplicate",
                         "description": latest["description"] + " (charged twice)"})
    logs = ticket_logs(kind, issue, endpoint, migration_source, latest["date"], rng)
    phrasing = perturb(rng.choice(support_pools.PHRASINGS[kind]["train"]), vocabulary, rng, augment)
    text = phrasing.format(name=customer["name"], email=customer["email"], plan=plan, amount=f"${amount:.2f}",
                           date=latest["date"], month=latest["date"][:7], endpoint=endpoint, source=migration_source)
    ticket = Ticket(f"{word(rng, (1, 2))}-{rng.randint(0, 10**9)}-{index}", kind, text, customer, invoices, logs,
                    issue)
    return Ticket.from_dict(ticket.to_dict()).to_dict()


def support_tasks(count: int, seed: int = 0, augment: Augment = Augment()) -> list[dict[str, Any]]:
    """``count`` CustomerSupport-v0 task-file lines (random kinds, values and wording)."""
    rng, vocabulary = random.Random(f"support-{seed}"), train_vocabulary()
    return [support_task(index, rng, vocabulary, augment) for index in range(count)]


# ----------------------------------------------------------------------------- copy drills


EXPRESSION_DRILLS = 0.3  # the share of drill values that are arithmetic expressions


def drill_value(rng: random.Random) -> str:
    """A random value of a kind the envs' tools take: an arithmetic expression (a random shape
    of 2-5 numbers: operators must be copied, not guessed from a few shapes), an email, an id,
    a number, a name, a date, a month or an endpoint."""
    if rng.random() < EXPRESSION_DRILLS:
        shape = random_shape(rng, (2, 5))
        return shape.format(**{name: rng.randint(2, 10 ** rng.randint(1, 4) - 1)
                               for name in re.findall(r"{(\w+)}", shape)})
    kind = rng.randrange(7)
    if kind == 0:
        first, last = name_word(rng), name_word(rng)
        return email(rng, first, last)
    if kind == 1:
        return rng.choice(("u", "INV-", "req_", "mig-")) + _digits(rng)
    if kind == 2:  # as long as the products of four-digit numbers a tool returns
        number = str(rng.randint(1, 10 ** rng.randint(1, 12) - 1))
        return number + rng.choice(("", "", ".0", f".{rng.randint(1, 99)}"))
    if kind == 3:
        return f"{name_word(rng)} {name_word(rng)}"
    if kind == 4:
        return f"{month(rng)}-{rng.randint(1, 28):02d}"
    if kind == 5:
        return month(rng)
    return _fresh(lambda: f"/v{rng.randint(1, 4)}/{word(rng)}")


def copy_drills(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` two-message conversations in which the assistant repeats the values of the
    user's message, one per line or (half of them) as a JSON object of random keys, the way
    tool-call arguments hold them (whole numbers as JSON floats, ``835.0``): dense practice
    in copying text from the context, which every tool call of the envs needs (no tools, no
    system turn; short, so they cost little)."""
    rng = random.Random(f"drill-{seed}")
    drills = []
    for _ in range(count):
        values = [drill_value(rng) for _ in range(rng.randint(2, 6))]
        prose = " ".join(rng.choice(("", word(rng) + " ", word(rng) + ": ")) + value for value in values)
        if rng.random() < 0.5:
            reply = "\n".join(values)
        else:
            keys: list[str] = []
            while len(keys) < len(values):
                key = word(rng, (1, 2))
                keys += [key] if key not in keys else []
            reply = json.dumps({key: float(value) if value.isdigit() else value for key, value in zip(keys, values)})
        drills.append({"messages": [{"role": "user", "content": prose}, {"role": "assistant", "content": reply}]})
    return drills


# ------------------------------------------------------------------------------ recording

TASKS: dict[str, Callable[[int, int, Augment], list[dict[str, Any]]]] = {
    MATH_ENV: math_tasks,
    SUPPORT_ENV: support_tasks,
}


def write_tasks(path: str | Path, tasks: Sequence[dict[str, Any]]) -> Path:
    """Write task-file lines (JSONL) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(task) + "\n" for task in tasks), encoding="utf-8")
    return path


def task_ids(task_file: str | Path) -> list[str]:
    """The ``task_id`` of every line of a task file (the envs' ``task_file`` JSONL), in order."""
    lines = Path(task_file).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["task_id"] for line in lines if line.strip()]


def record_tasks(path: str | Path, env_id: str, task_file: str | Path) -> int:
    """Play the scripted expert in text mode once on every task of ``task_file`` (each drawn by
    its id: ``reset(options={"task_id": ...})``) and append the episodes to ``path``; return how
    many it solved."""
    env = TrajectoryRecorder(gym.make(env_id, action_mode="text", task_file=str(task_file)), path)
    expert = ExpertPolicy(env)
    solved = 0
    for task_id in task_ids(task_file):
        _, metrics = run_episode(env, expert, seed=0, options={"task_id": task_id})
        solved += metrics.get("success", 0.0) == 1.0
    env.close()
    return solved


def build_corpus(out: str | Path, envs: Sequence[str], episodes: int, seed: int = 0,
                 augment: Augment = Augment(), drills: int = 0) -> Path:
    """Write ``<out>/tasks/<env>.jsonl`` (``episodes`` augmented tasks per env) and the expert's
    episodes on them to ``<out>/expert_train.jsonl``, then ``drills`` copy drills
    (:func:`copy_drills`), replacing an earlier file; return its path."""
    from ...run import canonical_env_id

    out = Path(out)
    data = out / "expert_train.jsonl"
    data.unlink(missing_ok=True)
    for name in envs:
        env_id = canonical_env_id(name)
        if env_id not in TASKS:
            raise ValueError(f"no augmented tasks for {env_id}; choose from {sorted(TASKS)}")
        task_file = write_tasks(out / "tasks" / f"{env_id.split('/')[-1]}.jsonl", TASKS[env_id](episodes, seed, augment))
        solved = record_tasks(data, env_id, task_file)
        if solved != episodes:
            raise RuntimeError(f"the expert solved {solved} of {episodes} augmented {env_id} tasks")
    with data.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(drill) + "\n" for drill in copy_drills(drills, seed))
    return data

"""Automatic prompt optimisation (``apo``): beam search over the agent's system prompt.

Round 0 scores the env's own instructions on the validation slice (``val_episodes`` train-split
tasks on fixed seeds). Each round then

1. plays every beam prompt on a fresh batch of ``train_batch`` train-split tasks with the agent
   (a local Hugging Face model, or ``model`` at the OpenAI-compatible ``base_url``);
2. proposes ``candidates_per_prompt`` new prompts per beam prompt with each proposer:
   ``critique`` asks the optimiser model (``optimizer_model`` at ``optimizer_base_url``) for a
   critique of the failed episodes (their conversations and the grader's reasons), then for the
   prompt edited after it; ``search`` needs no optimiser model: it edits the prompt by one
   random move (add, swap or drop a few-shot demonstration from the pool of successful
   trajectories: the env's expert, a recorder file, the agent's own successes; add a hint or drop
   a sentence of the instructions);
3. scores the new prompts on the validation slice and keeps the ``beam_width`` best (success,
   then return) of the beam and the new prompts.

Every prompt version, with its scores, parent, proposer and critique, is kept in
``apo_state.json`` (the run's checkpoint, written after each round; ``--resume`` continues with
the next round), the best one in ``best_prompt.txt``; endpoint errors (retried by the client
first) are recorded in ``errors.jsonl`` and the search goes on. TensorBoard: ``apo/*`` per round.
The budget: ``rounds``, ``max_episodes`` agent episodes and the run's ``total_steps`` env steps.

    agentgym train math --algo apo --set model=models/agentgym-tiny --set rounds=3
    agentgym train math --algo apo --set model=NAME --set base_url=http://127.0.0.1:8000/v1 \\
        --set optimizer_model=NAME --set optimizer_base_url=http://127.0.0.1:8000/v1
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentgym_envs.evaluation import BatchPolicy, episode_records, tool_env
from agentgym_envs.inference import ChatClient, EndpointError

from ..run import Trained, make_env, write_json_atomic
from . import runtime
from .prompting import STATE_FILE, Prompt, PromptPolicy, agent_spec, play_prompt, render_demo

PROPOSERS = ("critique", "search")
CRITIQUE_ENDS = ("requested", "edited", "empty", "failed")  # State.critiques: requests and how they ended
VALIDATION_SEED = 100_000  # the validation slice: train-split tasks seeded 100000, 100001, ...
TRAIN_SEED = 200_000  # round r's batch: train-split tasks seeded 200000 + (r - 1) * train_batch, ...
DEMO_SEED = 300_000  # the expert's demonstrations
BEST_PROMPT_FILE = "best_prompt.txt"
ERRORS_FILE = "errors.jsonl"


@dataclass
class Config:
    """Every setting of an APO run."""

    model: str = "models/agentgym-tiny"  # the agent: a local model directory or hub id, or the model name at base_url
    base_url: str | None = None  # the agent's OpenAI-compatible endpoint (None: the model runs here with transformers)
    api_key: str | None = None
    optimizer_model: str | None = None  # the model that critiques and edits prompts (None: the search proposer only)
    optimizer_base_url: str | None = None  # its endpoint (None: OPENAI_BASE_URL)
    optimizer_api_key: str | None = None
    proposers: str = "auto"  # "critique", "search", "critique+search"; auto: both with an optimizer_model, else search
    rounds: int = 3
    beam_width: int = 2
    train_batch: int = 8  # train-split episodes per beam prompt per round
    val_episodes: int = 16  # the validation slice every new prompt is scored on
    candidates_per_prompt: int = 2  # new prompts per beam prompt per proposer per round
    max_episodes: int = 0  # agent episodes in all (0: no limit besides rounds and total_steps)
    max_demos: int = 2  # few-shot demonstrations in a prompt
    expert_demos: int = 8  # expert episodes recorded for the demonstration pool (0: none)
    demo_file: str | None = None  # a TrajectoryRecorder JSONL whose successful episodes join the pool
    failures_shown: int = 3  # failed episodes in a critique request
    temperature: float | None = 0.0  # the agent's (None: the server's default)
    max_tokens: int = 256  # per agent reply
    optimizer_temperature: float | None = 0.7
    optimizer_max_tokens: int = 512
    concurrency: int = 4  # episodes played at once (requests in flight, or one batched generate)
    timeout: float = 60.0  # seconds per request attempt
    max_retries: int = 3  # retries of a failed request (back-off 1, 2, 4 s ...)

    def __post_init__(self) -> None:
        for name in ("rounds", "beam_width", "train_batch", "val_episodes", "candidates_per_prompt", "concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.max_episodes < 0 or self.max_demos < 0 or self.expert_demos < 0:
            raise ValueError("max_episodes, max_demos and expert_demos must not be negative")
        unknown = set(self.proposer_names) - set(PROPOSERS)
        if unknown or not self.proposer_names:
            raise ValueError(f"proposers must be 'auto' or names from {PROPOSERS} joined by '+', got {self.proposers!r}")
        if "critique" in self.proposer_names and not self.optimizer_model:
            raise ValueError("the critique proposer needs an optimizer_model (or use --set proposers=search)")

    @property
    def proposer_names(self) -> list[str]:
        if self.proposers == "auto":
            return ["critique", "search"] if self.optimizer_model else ["search"]
        return [name for name in self.proposers.split("+") if name]


GENERIC_HINTS = (
    "Call exactly one tool per turn and write nothing else.",
    "Copy names, numbers and identifiers exactly as they appear in the task and in tool results.",
    "Do not repeat a call that already succeeded: use its result.",
    "As soon as you know the answer, call the tool that finishes the task.",
)

CRITIQUE_REQUEST = """An AI agent solved tasks with tools under this system prompt:
```
{prompt}
```

Episodes it failed, each with the grader's verdict:
{episodes}

What in the system prompt led to these failures, and what should it say instead? Be brief and specific."""

EDIT_REQUEST = """An AI agent solved tasks with tools under this system prompt:
```
{prompt}
```

A critique of its failures:
{critique}

Write the improved system prompt: keep what works, change what the critique names. Answer with the new system prompt only, inside ``` fences."""


# ------------------------------------------------------------------ prompt versions
@dataclass
class Version:
    """One prompt version and what the search learnt about it. ``train_success``: round -> success
    on that round's batch; ``val_success``/``val_return``: on the validation slice (None: not scored)."""

    id: str
    instructions: str
    demos: list[str]
    parent: str | None
    proposer: str
    round: int
    val_success: float | None = None
    val_return: float | None = None
    train_success: dict[str, float] = field(default_factory=dict)
    critique: str | None = None

    @property
    def prompt(self) -> Prompt:
        return Prompt(self.instructions, tuple(self.demos))

    @property
    def text(self) -> str:
        return self.prompt.render()

    def rank(self) -> tuple[float, float]:
        return (self.val_success if self.val_success is not None else -1.0,
                self.val_return if self.val_return is not None else float("-inf"))


@dataclass
class State:
    """The search so far (``apo_state.json``): every version, the beam, the demonstration pool and
    what was spent. ``round``: the last finished round."""

    config: dict[str, Any]
    agent: dict[str, Any]
    versions: dict[str, Version] = field(default_factory=dict)
    beam: list[str] = field(default_factory=list)
    demo_pool: list[str] = field(default_factory=list)
    round: int = -1
    episodes: int = 0
    env_steps: int = 0
    errors: int = 0
    seconds: float = 0.0
    critiques: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CRITIQUE_ENDS, 0))

    def add(self, instructions: str, demos: Sequence[str], parent: str | None, proposer: str, round_: int,
            critique: str | None = None) -> Version | None:
        """A new version, or None when its text is one the search has already seen."""
        version = Version(f"p{len(self.versions):03d}", instructions.strip(), list(demos), parent, proposer, round_,
                          critique=critique)
        if any(known.text == version.text for known in self.versions.values()):
            return None
        self.versions[version.id] = version
        return version

    def best(self) -> Version:
        return self.versions[self.beam[0]]

    def save(self, run_dir: Path) -> None:
        data = {k: v for k, v in asdict(self).items() if k != "versions"}
        data["prompts"] = {k: {**asdict(v), "text": v.text} for k, v in self.versions.items()}
        data["best"] = self.beam[0]
        write_json_atomic(run_dir / STATE_FILE, data)
        (run_dir / BEST_PROMPT_FILE).write_text(self.best().text + "\n", encoding="utf-8")

    @classmethod
    def load(cls, run_dir: Path) -> State | None:
        path = run_dir / STATE_FILE
        if not path.exists():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        prompts = data.pop("prompts")
        data.pop("best")
        versions = {k: Version(**{f: v for f, v in prompt.items() if f != "text"}) for k, prompt in prompts.items()}
        return cls(**data, versions=versions)


# ------------------------------------------------------------------ playing prompts
@dataclass
class Player:
    """Plays prompts with the agent and counts what it spends; an episode an endpoint error ended
    is a failure, recorded in ``errors.jsonl``."""

    policy: BatchPolicy
    env_id: str
    env_kwargs: dict[str, Any]
    config: Config
    state: State
    run_dir: Path
    total_steps: int

    def affords(self, episodes: int) -> bool:
        """Whether ``episodes`` more agent episodes fit the budget."""
        limit = self.config.max_episodes
        return (not limit or self.state.episodes + episodes <= limit) and self.state.env_steps < self.total_steps

    def play(self, version: Version, seeds: range) -> list[dict[str, Any]]:
        records = play_prompt(self.policy, version.text, self.env_id, "train", seeds, self.env_kwargs,
                              self.config.concurrency)
        self.state.episodes += len(records)
        self.state.env_steps += int(sum(record["metrics"].get("turns", 0) for record in records))
        for record in records:
            if record["error"] is not None:
                self.record_error("agent", record["error"], prompt=version.id, task=record["task"])
        return records

    def record_error(self, source: str, message: str, **where: Any) -> None:
        self.state.errors += 1
        with (self.run_dir / ERRORS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"round": self.state.round + 1, "source": source, **where, "error": message}) + "\n")


def success_rate(records: Sequence[dict[str, Any]]) -> float:
    return float(np.mean([record["metrics"].get("success", 0.0) for record in records]))


def mean_return(records: Sequence[dict[str, Any]]) -> float:
    return float(np.mean([record["return"] for record in records]))


def succeeded(record: dict[str, Any]) -> bool:
    return record["error"] is None and record["metrics"].get("success", 0.0) >= 1.0


# ------------------------------------------------------------------ demonstrations and hints
def expert_demos(env_id: str, env_kwargs: dict[str, Any], episodes: int) -> list[str]:
    """Successful episodes of the env's scripted expert on train-split tasks, rendered."""
    if episodes == 0:
        return []
    records = episode_records(env_id, "expert", episodes=episodes, split="train", seed=DEMO_SEED, keep_messages=True,
                              **{**env_kwargs, "action_mode": "text"})
    return [render_demo(record["messages"]) for record in records if succeeded(record)]


def file_demos(path: str) -> list[str]:
    """The successful episodes of a :class:`~agentgym_envs.wrappers.recorder.TrajectoryRecorder` file, rendered."""
    demos = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        try:
            episode = json.loads(line)
            if episode["metrics"].get("success", 0.0) >= 1.0:
                demos.append(render_demo(episode["messages"]))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}, line {number}: not a recorded episode ({exc})") from None
    return demos


def add_demos(pool: list[str], demos: Sequence[str]) -> None:
    pool.extend(demo for demo in dict.fromkeys(demos) if demo not in pool)


def hints(pool: Sequence[str]) -> list[str]:
    """The hints the search may add: the generic ones and, from the pool, the most common order of tool calls."""
    orders = Counter(tuple(re.findall(r"^Call: (\w+)\(", demo, re.M)) for demo in pool)
    found = [f"A typical solution calls, in order: {', '.join(order)}." for order, _ in orders.most_common(1) if order]
    return [*GENERIC_HINTS, *found]


# ------------------------------------------------------------------ proposers
Proposal = tuple[str, list[str], str | None]  # instructions, demos, critique


def search_proposals(version: Version, pool: Sequence[str], config: Config, rng: np.random.Generator) -> list[Proposal]:
    """``candidates_per_prompt`` edits of ``version``, each one random move: add, swap or drop a
    demonstration, add a hint, drop a sentence of the instructions."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", version.instructions) if s]
    unused_demos = [demo for demo in pool if demo not in version.demos]
    unused_hints = [hint for hint in hints(pool) if hint not in version.instructions]
    moves: dict[str, Callable[[], Proposal]] = {}
    if unused_demos and len(version.demos) < config.max_demos:
        moves["add_demo"] = lambda: (version.instructions, [*version.demos, pick(unused_demos, rng)], None)
    if unused_demos and version.demos:
        moves["swap_demo"] = lambda: (version.instructions, swapped(version.demos, pick(unused_demos, rng), rng), None)
    if version.demos:
        moves["drop_demo"] = lambda: (version.instructions, dropped(version.demos, rng), None)
    if unused_hints:
        moves["add_hint"] = lambda: (f"{version.instructions} {pick(unused_hints, rng)}".strip(), version.demos, None)
    if len(sentences) > 1:
        moves["drop_sentence"] = lambda: (" ".join(dropped(sentences, rng)), version.demos, None)
    names = sorted(moves)
    return [moves[pick(names, rng)]() for _ in range(config.candidates_per_prompt)] if names else []


def pick(items: Sequence[Any], rng: np.random.Generator) -> Any:
    return items[int(rng.integers(len(items)))]


def swapped(items: Sequence[str], new: str, rng: np.random.Generator) -> list[str]:
    out = list(items)
    out[int(rng.integers(len(out)))] = new
    return out


def dropped(items: Sequence[str], rng: np.random.Generator) -> list[str]:
    out = list(items)
    del out[int(rng.integers(len(out)))]
    return out


def critique_proposals(client: ChatClient, version: Version, failures: Sequence[dict[str, Any]], config: Config,
                       counts: dict[str, int], on_error: Callable[[str], None]) -> list[Proposal]:
    """``candidates_per_prompt`` edits of ``version``'s instructions by the optimiser model: a
    critique of ``failures``, then the prompt edited after it (its demonstrations kept). A
    request that fails for good is reported to ``on_error`` and proposes nothing; ``counts``
    tallies the critiques requested and how they ended (``edited``, ``empty``: no new text, ``failed``)."""
    if not failures:
        return []
    episodes = "\n\n".join(f"Episode {number}:\n{failure_text(record)}"
                           for number, record in enumerate(failures[:config.failures_shown], start=1))
    proposals = []
    for _ in range(config.candidates_per_prompt):
        counts["requested"] += 1
        try:
            critique = ask(client, CRITIQUE_REQUEST.format(prompt=version.instructions, episodes=episodes))
            edited = fenced(ask(client, EDIT_REQUEST.format(prompt=version.instructions, critique=critique)))
        except EndpointError as exc:
            counts["failed"] += 1
            on_error(str(exc))
            continue
        if edited and edited != version.instructions:
            counts["edited"] += 1
            proposals.append((edited, version.demos, critique))
        else:
            counts["empty"] += 1
    return proposals


def failure_text(record: dict[str, Any], max_chars: int = 1500) -> str:
    """A failed episode for the optimiser: the conversation, then why it failed."""
    verdict = record["error"] or (record.get("outcome") or {}).get("reason") or "the episode ended without success"
    return f"{render_demo(record['messages'], max_chars)}\nVerdict: {verdict}"


def ask(client: ChatClient, request: str) -> str:
    return (client.chat([{"role": "user", "content": request}]).message.get("content") or "").strip()


def fenced(reply: str, max_chars: int = 4000) -> str:
    """The text inside the reply's first ``` fence (the whole reply when it has none)."""
    match = re.search(r"```[^\n`]*\n?(.*?)```", reply, re.S)
    return (match.group(1) if match else reply).strip()[:max_chars]


# ------------------------------------------------------------------ the run
def train(run: Any) -> Trained:
    """The lifecycle's entry point (``agentgym train ENV --algo apo --set model=...``)."""
    state = State.load(run.run_dir) if run.resume else None
    config = run.config(Config)
    if state is not None:  # the run's settings; a resumed run may raise its rounds and episode budget
        config = Config(**{**state.config, **{k: v for k, v in run.overrides.items() if k in ("rounds", "max_episodes")}})
    spec = agent_spec(config.model, config.base_url, api_key=config.api_key, device=run.device, timeout=config.timeout,
                      max_retries=config.max_retries, temperature=config.temperature, max_tokens=config.max_tokens)
    if state is None:
        state = State(asdict(config), asdict(spec))
    state.config = asdict(config)
    clock = time.perf_counter() - state.seconds  # seconds spent count on from a resumed run's
    optimizer = ChatClient(config.optimizer_model, config.optimizer_base_url, config.optimizer_api_key,
                           timeout=config.timeout, max_retries=config.max_retries,
                           request_options={k: v for k, v in (("temperature", config.optimizer_temperature),
                                                              ("max_tokens", config.optimizer_max_tokens)) if v is not None}
                           ) if "critique" in config.proposer_names else None
    policy = spec.build(config.concurrency)
    player = Player(policy, run.env_id, dict(run.env_kwargs), config, state, run.run_dir, run.total_steps)
    writer = runtime.writer_for(run.run_dir, state.round if state.round >= 0 else None)
    validation = range(VALIDATION_SEED, VALIDATION_SEED + config.val_episodes)

    if state.round < 0:  # round 0: the env's own instructions, and the demonstration pool
        env = make_env(run.env_id, "train", {**run.env_kwargs, "action_mode": "text"})
        instructions = tool_env(env).scenario.instructions
        env.close()
        seed = state.add(instructions, [], None, "seed", 0)
        records = score(player, seed, validation)
        if all(record["error"] is not None for record in records):
            raise EndpointError(f"the agent answered no episode of the validation slice: {records[0]['error']}")
        state.beam = [seed.id]
        add_demos(state.demo_pool, expert_demos(run.env_id, run.env_kwargs, config.expert_demos))
        if config.demo_file:
            add_demos(state.demo_pool, file_demos(config.demo_file))
        finish_round(state, run.run_dir, writer, 0, [], clock)

    bar = run.progress_bar(config.rounds, initial=state.round, unit="round")
    for round_ in range(state.round + 1, config.rounds + 1):
        if not player.affords(config.train_batch):
            break
        rng = np.random.default_rng([run.seed, round_])
        batch = range(TRAIN_SEED + (round_ - 1) * config.train_batch, TRAIN_SEED + round_ * config.train_batch)
        proposals: list[Version] = []
        for version in [state.versions[id_] for id_ in state.beam]:  # 1. play the beam on the round's batch
            if not player.affords(config.train_batch):
                break
            records = player.play(version, batch)
            version.train_success[str(round_)] = success_rate(records)
            add_demos(state.demo_pool, [render_demo(r["messages"]) for r in records if succeeded(r)])
            failures = [record for record in records if not succeeded(record)]
            made: list[tuple[str, Proposal]] = []  # 2. propose
            if optimizer is not None:
                def optimizer_error(message: str, prompt: str = version.id) -> None:
                    player.record_error("optimizer", message, prompt=prompt)

                made += [("critique", p) for p in critique_proposals(optimizer, version, failures, config,
                                                                     state.critiques, optimizer_error)]
            if "search" in config.proposer_names:
                made += [("search", p) for p in search_proposals(version, state.demo_pool, config, rng)]
            for proposer, (instructions, demos, critique) in made:
                new = state.add(instructions, demos, version.id, proposer, round_, critique)
                if new is not None:
                    proposals.append(new)
        scored = []
        for version in proposals:  # 3. score the new prompts on the validation slice
            if player.affords(config.val_episodes):
                score(player, version, validation)
                scored.append(version)
        candidates = [state.versions[id_] for id_ in state.beam] + scored  # 4. keep the best
        state.beam = [v.id for v in sorted(candidates, key=Version.rank, reverse=True)[:config.beam_width]]
        finish_round(state, run.run_dir, writer, round_, scored, clock)
        bar.update()
        bar.set_postfix(val_success=f"{state.best().val_success:.3f}", episodes=state.episodes)
    bar.close()
    writer.close()
    getattr(policy, "close", lambda: None)()
    best = state.best()
    print(f"apo: best prompt {best.id} ({best.proposer}, round {best.round}), validation success "
          f"{best.val_success:.3f}, {state.episodes} agent episodes; {run.run_dir / BEST_PROMPT_FILE}")
    return Trained(PromptPolicy(run.env_id, spec, best.text, run.env_kwargs), state.env_steps, [], state.seconds)


def score(player: Player, version: Version, validation: range) -> list[dict[str, Any]]:
    """``version`` played on the validation slice; its success and return recorded."""
    records = player.play(version, validation)
    version.val_success, version.val_return = success_rate(records), mean_return(records)
    return records


def finish_round(state: State, run_dir: Path, writer: Any, round_: int, scored: Sequence[Version], clock: float) -> None:
    """The round's TensorBoard scalars, then the state (every prompt version) on disk; ``clock``:
    the ``perf_counter`` time the run's seconds count from."""
    state.round = round_
    state.seconds = time.perf_counter() - clock
    best = state.best()
    beam = [state.versions[id_] for id_ in state.beam]
    writer.add_scalar("apo/val_success", best.val_success, round_)
    writer.add_scalar("apo/val_return", best.val_return, round_)
    writer.add_scalar("apo/beam_val_success", float(np.mean([v.val_success for v in beam])), round_)
    if round_ > 0:
        trained = [v.train_success[str(round_)] for v in state.versions.values() if str(round_) in v.train_success]
        writer.add_scalar("apo/train_success", max(trained, default=0.0), round_)
        writer.add_scalar("apo/candidates", len(scored), round_)
        writer.add_scalar("apo/candidate_val_success", max((v.val_success for v in scored), default=0.0), round_)
    writer.add_scalar("apo/episodes", state.episodes, round_)
    writer.add_scalar("apo/endpoint_errors", state.errors, round_)
    writer.flush()
    state.save(run_dir)

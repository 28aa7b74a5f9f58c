"""The tau2 parts that need a chat model, on any OpenAI-compatible endpoint (through
:class:`~agentgym_envs.inference.chat_client.ChatClient`: timeouts, retries with back-off, errors):

- :class:`LLMUser`, the customer played by a model, as upstream evaluates agents. It sees
  only the task's user scenario (persona, why it calls, what it knows and does not know,
  how to behave), gives information only when asked, in a dual-control domain (telecom)
  acts on its own phone with the phone's tools (function calling, as upstream's user
  simulator does), and ends the conversation with
  upstream's control tokens: ``###STOP###`` (done), ``###TRANSFER###`` (handed to a human),
  ``###OUT-OF-SCOPE###`` (its instructions do not cover what it is asked).
- :class:`NLJudge`, which decides for each of a task's natural-language assertions whether
  the conversation meets it (upstream's NL_ASSERTION component).

An endpoint that fails (down, timing out, answering garbage) does not raise out of either:
the user stops with ``error`` set, the judge returns an error; callers score that as a
failure and record the error, never as a success.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentgym_envs.inference.chat_client import ChatClient, EndpointError

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
CONTROL_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
AGENT_GREETING = "Hi! How can I help you today?"

USER_GUIDELINES = f"""You play a customer who contacts a customer-service agent by chat. The \
scenario below is everything you know: who you are, why you are getting in touch, what you know \
and what you do not know, and how to behave. Nothing else about the world is known to you.

How to play:
- Write only what the customer says, one short message at a time, in plain language. You are \
the customer, never the agent: do not describe the agent's actions or invent their results.
- Start with why you are getting in touch, without giving every detail at once. Hand over a \
piece of information (a name, an id, an address...) only when the agent asks for it.
- Never make up facts the scenario does not give you. If the agent asks for something you do \
not know, say that you do not know it.
- Follow the scenario's instructions on what to accept, refuse or insist on.
- When your request has been dealt with as the scenario wants, or it is clear that it cannot \
be, end the conversation: write {STOP} on its own.
- If the agent hands you over to a human agent, write {TRANSFER} on its own.
- If the agent asks you something your scenario gives you no way to answer or decide, write \
{OUT_OF_SCOPE} on its own."""

JUDGE_GUIDELINES = """You check whether a conversation between a customer-service agent and a \
customer meets a list of expected outcomes. Read the whole transcript (roles: user is the \
customer, assistant is the agent, tool is a tool's result) and judge each expected outcome \
on its own: it is met only if the transcript shows it clearly.

Answer with JSON only, in this form:
{"results": [{"expectedOutcome": "<the outcome, copied>", "reasoning": "<one sentence>", \
"metExpectation": true or false}, ...]}
with one entry per expected outcome, in the order given."""


def user_scenario_text(user_scenario: Mapping[str, Any]) -> str:
    """A task's ``user_scenario`` as the simulated user reads it (persona, then the
    instructions field by field)."""
    lines = []
    if user_scenario.get("persona"):
        lines += ["Persona:", str(user_scenario["persona"]), ""]
    instructions = user_scenario.get("instructions")
    lines.append("Instructions:")
    if isinstance(instructions, Mapping):
        for key in ("domain", "reason_for_call", "known_info", "unknown_info", "task_instructions"):
            if instructions.get(key):
                lines.append(f"{key.replace('_', ' ').capitalize()}: {instructions[key]}")
    else:
        lines.append(str(instructions))
    return "\n".join(lines)


@dataclass
class LLMUser:
    """One episode's customer, played by ``client``'s model from ``scenario`` (the text of
    :func:`user_scenario_text`).

    Its conversation is kept from its own side: the agent's messages are ``user`` turns,
    its own replies ``assistant`` turns. ``stopped`` turns true when it writes a control
    token (``stop_reason`` says which) or when the endpoint fails (``error`` says how).
    """

    client: ChatClient
    scenario: str
    tools: list[dict[str, Any]] | None = None  # its phone's tools (dual control), as JSON schemas
    device: Callable[[str, dict[str, Any]], str] | None = None  # runs one of them
    max_tool_rounds: int = 10
    stopped: bool = False
    stop_reason: str = ""
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.messages = [{"role": "system", "content": f"{USER_GUIDELINES}\n\n<scenario>\n{self.scenario}\n</scenario>"}]

    def opening(self) -> str:
        """The customer's first message, in answer to the agent's greeting."""
        return self.reply(AGENT_GREETING)[0]

    def reply(self, message: str) -> tuple[str, list[tuple[str, Any]]]:
        """The customer's answer to the agent's ``message`` (and no revealed entities: a
        model's free text has no table rows)."""
        if self.stopped:
            return "(the customer has left the conversation)", []
        self.messages.append({"role": "user", "content": message})
        try:
            text = self._answer()
        except EndpointError as exc:
            self.stopped, self.stop_reason, self.error = True, "error", f"user simulator: {exc}"
            return f"(no reply: the user simulator failed: {exc})", []
        token = next((t for t in CONTROL_TOKENS if t in text), None)
        if token is not None:
            self.stopped, self.stop_reason = True, token
        return text, []

    def _answer(self) -> str:
        """The model's next message; the phone tool calls it makes on the way are run (at most
        ``max_tool_rounds`` rounds) and their results given back to it."""
        tools = self.tools if self.device is not None else None
        for _ in range(self.max_tool_rounds):
            reply = self.client.chat(self.messages, tools=tools).message
            calls = reply.get("tool_calls") or []
            self.messages.append({"role": "assistant", "content": reply.get("content") or "", **({"tool_calls": calls} if calls else {})})
            if not calls:
                return reply.get("content") or ""
            for call in calls:
                self.messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": self._run(call)})
        return reply.get("content") or ""

    def _run(self, call: Mapping[str, Any]) -> str:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            return f"Error: the arguments are not JSON: {exc}"
        if not isinstance(arguments, dict):
            return "Error: the arguments must be a JSON object"
        assert self.device is not None
        return self.device(str(function.get("name", "")), arguments)

    def record_write(self, key: str) -> None:
        """The agent made a write call: the customer does not see tool calls."""


@dataclass(frozen=True)
class Judgement:
    """The judge's verdict on each assertion (in order), or the error that prevented one."""

    met: tuple[bool, ...] = ()
    reasons: tuple[str, ...] = ()
    error: str | None = None

    @property
    def all_met(self) -> bool:
        return self.error is None and all(self.met)


@dataclass
class NLJudge:
    """Judges natural-language assertions on a transcript with ``client``'s model (use
    temperature 0, as upstream does)."""

    client: ChatClient

    def __call__(self, assertions: Sequence[str], transcript: Sequence[tuple[str, str]]) -> Judgement:
        """Whether each of ``assertions`` holds for ``transcript`` (``(role, content)`` turns)."""
        if not assertions:
            return Judgement()
        conversation = "\n".join(f"{role}: {content}" for role, content in transcript)
        outcomes = "\n".join(f"- {assertion}" for assertion in assertions)
        messages = [
            {"role": "system", "content": JUDGE_GUIDELINES},
            {"role": "user", "content": f"<transcript>\n{conversation}\n</transcript>\n\n"
                                        f"<expected_outcomes>\n{outcomes}\n</expected_outcomes>"},
        ]
        try:
            text = self.client.chat(messages).message.get("content") or ""
        except EndpointError as exc:
            return Judgement(error=f"NL judge: {exc}")
        return parse_judgement(text, len(assertions))


def parse_judgement(text: str, count: int) -> Judgement:
    """The judge's JSON answer for ``count`` assertions (a fenced block or prose around it is
    fine); an answer that is not that JSON is an error, never a pass."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        results = json.loads(match.group(0))["results"] if match else None
        met = tuple(item["metExpectation"] for item in results)
        reasons = tuple(str(item.get("reasoning", "")) for item in results)
    except (json.JSONDecodeError, KeyError, TypeError):
        return Judgement(error=f"NL judge: the answer is not the expected JSON: {text[:200]!r}")
    if len(met) != count or not all(isinstance(m, bool) for m in met):
        return Judgement(error=f"NL judge: expected {count} boolean verdicts, got {list(met)!r}")
    return Judgement(met, reasons)

"""Conversations as token pieces, through any Hugging Face tokenizer's own chat template.

A conversation (OpenAI chat messages plus tool schemas) is rendered by the tokenizer's chat
template one message at a time: each rendering must extend the previous one (true of the
common templates: ChatML/Qwen, Llama 3, the project's own), and the extension is one piece.
Pieces are tokenised separately, so that a trainer can mark which tokens the model wrote
(assistant turns, up to and including the end-of-turn token) and a rollout can append the
environment's reply to the sampled tokens without tokenising the model's output again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


class TemplateError(ValueError):
    """The tokenizer's chat template cannot be split into per-message pieces."""


@dataclass(frozen=True)
class Piece:
    """A run of text and whether it is the model's own output (trained on)."""

    text: str
    assistant: bool


class ChatFormat:
    """Render conversations with ``tokenizer``'s chat template and cut them into pieces.

    ``end_of_turn`` is the text that closes an assistant turn (the tokenizer's ``eos_token``
    by default: ``<|im_end|>`` for ChatML models).
    """

    def __init__(self, tokenizer: Any, end_of_turn: str | None = None) -> None:
        if not getattr(tokenizer, "chat_template", None):
            raise TemplateError(f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no chat template")
        self.tokenizer = tokenizer
        self.end_of_turn = end_of_turn or tokenizer.eos_token
        if not self.end_of_turn:
            raise TemplateError("the tokenizer has no eos_token: pass end_of_turn")
        self.end_of_turn_id = tokenizer.convert_tokens_to_ids(self.end_of_turn)

    def render(self, messages: Sequence[Message], tools: list[dict] | None, generation_prompt: bool = False) -> str:
        """The template's text for ``messages`` (and an opened assistant turn if asked)."""
        return self.tokenizer.apply_chat_template(
            list(messages), tools=tools or None, tokenize=False, add_generation_prompt=generation_prompt
        )

    def pieces(self, messages: Sequence[Message], tools: list[dict] | None) -> list[Piece]:
        """The whole conversation as pieces: each assistant turn is the text the model writes
        after the generation prompt, up to and including the end-of-turn text; the rest
        (system, user, tool messages, turn headers, separators, and an assistant turn marked
        ``"weight": 0`` as in the OpenAI fine-tuning format) is context."""
        pieces: list[Piece] = []
        done = ""
        for index, message in enumerate(messages):
            if message["role"] == "assistant":
                opened = self.render(messages[:index], tools, generation_prompt=True)
                pieces.append(Piece(self._extension(done, opened), False))
                closed = self.render(messages[: index + 1], tools)
                reply = self._extension(opened, closed)
                cut = reply.rfind(self.end_of_turn)
                if cut < 0:
                    raise TemplateError(f"the template does not close assistant turns with {self.end_of_turn!r}")
                cut += len(self.end_of_turn)
                pieces.append(Piece(reply[:cut], message.get("weight", 1) != 0))
                pieces.append(Piece(reply[cut:], False))
                done = closed
        pieces.append(Piece(self._extension(done, self.render(messages, tools)), False))
        return [piece for piece in pieces if piece.text]

    def prompt(self, messages: Sequence[Message], tools: list[dict] | None) -> str:
        """The opening context of an episode: ``messages`` and an opened assistant turn."""
        return self.render(messages, tools, generation_prompt=True)

    def continuation(self, messages: Sequence[Message], tools: list[dict] | None, replied: int) -> str:
        """The text after the model's end-of-turn token once the environment answered:
        ``messages[replied - 1]`` is the assistant turn the model wrote, ``messages[replied:]``
        the environment's reply; the text ends with a newly opened assistant turn."""
        closed = self.render(messages[:replied], tools)
        cut = closed.rfind(self.end_of_turn)
        if cut < 0:
            raise TemplateError(f"the template does not close assistant turns with {self.end_of_turn!r}")
        tail = closed[cut + len(self.end_of_turn):]
        return tail + self._extension(closed, self.render(messages, tools, generation_prompt=True))

    def encode(self, text: str) -> list[int]:
        """Token ids of one piece (no added BOS/EOS: the template wrote what it needs)."""
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @staticmethod
    def _extension(before: str, after: str) -> str:
        if not after.startswith(before):
            raise TemplateError("the chat template renders a conversation differently once it grows "
                                "(a rendering is not a prefix of the next): it cannot be split into turns")
        return after[len(before):]


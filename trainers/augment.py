"""Augmentation against paraphrase: perturb the task prompt's tokens of token observations.

The test split words tasks differently from the train split. Each task-prompt token is first
replaced, with probability ``swap``, by a token drawn from the batch's task prompts, then hidden
(set to PAD) with probability ``hide``. Hiding keeps a policy from leaning on any single word;
swapping puts every word in tasks of every kind, so a word that only happens to occur in one
kind's train phrasings (" from", " are", the digits of a ticket id) stops being evidence of
that kind. Hiding a whole prompt (probability ``blank``, per observation) leaves the policy only
the tool results to act on, so it learns to read them too (the logs of an API failure, a
duplicate invoice) and can still resolve a ticket whose unfamiliar wording it misreads. BC
applies the augmentation to every minibatch; PPO to the observations its rollouts act on.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from agentgym_envs.wrappers import PAD_ID


def perturb_task_tokens(obs: torch.Tensor, task_len: torch.Tensor, swap: float, hide: float,
                        blank: float = 0.0) -> torch.Tensor:
    """``obs`` [B, T] with each of the first ``task_len[b]`` ids (the task prompt) replaced, with
    probability ``swap``, by an id drawn uniformly from all the task-prompt ids of the batch (so
    frequent words are drawn often), then replaced by PAD with probability ``hide``; with
    probability ``blank`` a row's whole prompt is replaced by PAD."""
    in_task = (torch.arange(obs.shape[1], device=obs.device) < task_len[:, None]) & (obs != PAD_ID)
    if swap > 0 and in_task.any():
        pool = obs[in_task]
        swapped = in_task & (torch.rand(obs.shape, device=obs.device) < swap)
        obs = torch.where(swapped, pool[torch.randint(len(pool), obs.shape, device=obs.device)], obs)
    hidden = torch.zeros_like(in_task)
    if hide > 0:
        hidden |= torch.rand(obs.shape, device=obs.device) < hide
    if blank > 0:
        hidden |= torch.rand(obs.shape[0], 1, device=obs.device) < blank
    return torch.where(in_task & hidden, torch.full_like(obs, PAD_ID), obs)


@dataclass
class TaskTokenAugmentation:
    """The augmentation's config fields (a base of BC's and PPO's configs)."""

    task_token_swap: float = 0.15  # chance that each task-prompt token is swapped for one from another prompt
    task_token_dropout: float = 0.3  # chance that each task-prompt token is hidden
    task_prompt_dropout: float = 0.0  # chance that an observation's whole task prompt is hidden

    @property
    def augments(self) -> bool:
        return self.task_token_swap > 0 or self.task_token_dropout > 0 or self.task_prompt_dropout > 0

    def perturb(self, obs: torch.Tensor, task_len: torch.Tensor) -> torch.Tensor:
        """:func:`perturb_task_tokens` with this config's probabilities."""
        return perturb_task_tokens(obs, task_len, self.task_token_swap, self.task_token_dropout, self.task_prompt_dropout)

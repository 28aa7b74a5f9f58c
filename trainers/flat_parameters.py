"""A network's parameters as views of a few flat tensors, and their gradients as views of a few
more, so that Adam, gradient clipping and zeroing take a few long operations instead of a few
per tensor (a small network has many small tensors: CleanRL's MLP has twelve).

The results are those of the per-tensor operations to the last bit: Adam and the clipping
product are elementwise, and the clipping norm is taken per tensor, as torch's
``clip_grad_norm_`` takes it. A gradient is added into its view in place (autograd accumulates
into a gradient that exists), so the flat gradients are zeroed, never set to None.

    flat = FlatParameters(policy.parameters(), [value_head, rest])  # after policy.to(device)
    optimizer = torch.optim.Adam(flat.tensors, ...)
    flat.zero_grad(); loss.backward(); flat.clip_grad_norm_(0.5); optimizer.step()
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import torch
from torch import nn


class FlatParameters:
    """``parameters`` (a module's, in its order), each of ``groups`` (by default one group of
    all) made the views of one flat tensor (in :attr:`tensors`, what the optimizer steps) and
    its gradients the views of another."""

    def __init__(self, parameters: Iterable[nn.Parameter], groups: Iterable[Collection[nn.Parameter]] | None = None) -> None:
        self.parameters = list(parameters)
        members = [{id(parameter) for parameter in group} for group in (groups or [self.parameters])]
        self.groups = [[parameter for parameter in self.parameters if id(parameter) in group] for group in members]
        if sorted(id(parameter) for group in self.groups for parameter in group) != sorted(map(id, self.parameters)):
            raise ValueError("the groups must hold each parameter exactly once")
        self.tensors: list[nn.Parameter] = []
        self._gradients: list[torch.Tensor] = []
        for group in self.groups:
            data = torch.cat([parameter.detach().reshape(-1) for parameter in group])
            gradient = torch.zeros_like(data)
            offset = 0
            for parameter in group:
                size = parameter.numel()
                parameter.data = data[offset : offset + size].view_as(parameter)
                parameter.grad = gradient[offset : offset + size].view_as(parameter)
                offset += size
            flat = nn.Parameter(data)
            flat.grad = gradient
            self.tensors.append(flat)
            self._gradients.append(gradient)

    def set_trainable(self, index: int, trainable: bool) -> None:
        """Whether group ``index`` takes gradients and optimizer steps (an optimizer skips a
        tensor without a gradient, as it skips a frozen parameter)."""
        for parameter in self.groups[index]:
            parameter.requires_grad_(trainable)
        self.tensors[index].grad = self._gradients[index] if trainable else None

    def zero_grad(self) -> None:
        for gradient in self._gradients:
            gradient.zero_()

    def clip_grad_norm_(self, max_norm: float) -> torch.Tensor:
        """Scale the trainable gradients so that their total norm is at most ``max_norm``, as
        ``torch.nn.utils.clip_grad_norm_`` over the module's parameters does (the same norm,
        taken over the same gradients in the same order); returns the norm before."""
        total = nn.utils.get_total_norm([parameter.grad for parameter in self.parameters if parameter.requires_grad], foreach=True)
        nn.utils.clip_grads_with_norm_([tensor for tensor in self.tensors if tensor.grad is not None], max_norm, total, foreach=True)
        return total

    def optimizer_state(self, saved: dict[str, Any]) -> dict[str, Any]:
        """``saved``, an optimizer's state dict, for an optimizer over :attr:`tensors`: as it is
        when it was saved so, converted when it was saved over the parameters one by one (a
        checkpoint from before they were flattened): each group's per-parameter states joined
        in the group's order (zeros for a parameter that no loss reached, as its flat view now
        holds), its step count taken from them (they step together)."""
        groups = saved["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self.parameters):
            return saved
        index = {id(parameter): i for i, parameter in enumerate(self.parameters)}
        state = {}
        for g, group in enumerate(self.groups):
            entries = [saved["state"].get(index[id(parameter)]) for parameter in group]
            stepped = next((entry for entry in entries if entry is not None), None)
            if stepped is None:
                continue  # a group that never stepped (frozen) starts afresh, as its parameters would have
            state[g] = {key: value.clone() if key == "step" else torch.cat([
                (torch.zeros(parameter.numel(), dtype=value.dtype) if entry is None else entry[key].reshape(-1))
                for parameter, entry in zip(group, entries)]) for key, value in stepped.items()}
        return {"state": state, "param_groups": [{**groups[0], "params": list(range(len(self.groups)))}]}

"""Policy networks: the token policy for tool-use environments and an MLP for control tasks.

Both share one interface (CleanRL's ``get_action_and_value``)::

    action, log_prob, entropy, value = policy.get_action_and_value(obs, masks, action=None)

``action=None`` samples (or takes the argmax with ``deterministic=True``); a given action is
scored instead (the PPO update). ``masks`` is a :class:`Masks` for tool-use envs, None otherwise.
Where only one output is wanted, ``policy.log_prob(obs, masks, action)`` (behaviour cloning, a KL
reference) and ``policy.greedy_action(obs, masks)`` (an evaluation) give it with the same values
and gradients, the MLP from its actor alone.

The token policy reads the :class:`~agentgym_envs.wrappers.TokenIdsObservation` layout
(``context_len`` context ids, then ``max_entities`` rows of ``entity_len`` ids, ``PAD_ID``
padding). A token's vector is its id's hashed embedding (``vocab_buckets``) plus the mean of
its character n-gram embeddings (:mod:`trainers.subwords`), so that an unseen word still
resembles the seen words it shares n-grams with. Context tokens are summed in chunks of
``context_chunk`` (a chunk is a bag of tokens; chunks have positions); each entity row is
the sum of its tokens plus a row-position embedding, refined by a small MLP. A transformer
encoder runs over ``[CLS, entity summary, context chunks]`` (the summary is
the mean of the filled rows), which keeps the sequence short enough for a CPU. The tool head
and the value head read CLS; each argument slot is a pointer over the entity rows whose query
depends on CLS, the chosen tool and the entities chosen for earlier slots (autoregressive), so
the network serves any number of entities.

With ``n_agents`` > 0 (parameter sharing across a team) the observation is ``[agent_id,
*token ids]`` (column 0 the acting agent's index, as
:class:`~agentgym_envs.multiagent.wrappers.AgentIdTokens` writes it) and a learned agent
embedding is added to the CLS vector, so that one network acts for every agent.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agentgym_envs.wrappers import PAD_ID

from .subwords import feature_table

MASKED = -1e9  # logit of a masked choice (finite: keeps softmax/entropy NaN-free)
# MLPPolicy: batches of at least SPARSE_MIN_ROWS observations at least SPARSE_INPUT_DIM wide skip their
# all-zero columns in the first layers (fewer rows, as a rollout step's, gain nothing measurable)
SPARSE_INPUT_DIM, SPARSE_MIN_ROWS = 256, 64


class Masks(NamedTuple):
    """What a tool-use env allows: ``action`` is ``info["action_mask"]`` ([B, n_tools + n_slots *
    n_entities], MaskablePPO's layout), ``argument`` is ``info["argument_mask"]`` ([B, n_tools,
    n_slots, n_entities])."""

    action: torch.Tensor
    argument: torch.Tensor | None


@dataclass(frozen=True)
class TokenPolicyConfig:
    """Size of the token policy (defaults measured to train at a practical speed on 2 CPU cores)."""

    embed_dim: int = 64
    layers: int = 2
    heads: int = 4
    ff_dim: int = 128
    dropout: float = 0.0
    vocab_buckets: int = 8192  # token ids are hashed into this many embeddings (cl100k has 100k)
    context_chunk: int = 16  # context tokens summed into one transformer position
    subword_buckets: int = 8192  # hashed character n-gram embeddings per token (0: none), see trainers.subwords


@dataclass
class TokenPolicyFields:
    """The network's observation and the token policy's layout and size as flat config fields:
    the base of every torch trainer's config (so ``--set embed_dim=32`` works for each, and a
    warm start's network matches the next stage's). ``observation``: a ``Text`` observation as
    token ids (the token policy), ``"bag"`` (hashed counts, the MLP) or ``"features"`` (the env's
    features observation and flat admissible actions with their joint mask, the MLP: SB3's
    ``MlpPolicy`` network); ``action_capacity``: with ``"features"``, the flat actions a tool
    (:class:`~agentgym_envs.wrappers.FlatDiscreteAction`'s capacity; None: the scenario's
    ``flat_capacity``)."""

    observation: str = "tokens"
    action_capacity: int | None = None
    context_len: int = 320  # room for the ticket and a check_payment result (the longest turn)
    entity_len: int = 12
    embed_dim: int = 64
    layers: int = 2
    heads: int = 4
    ff_dim: int = 128

    def token_config(self) -> TokenPolicyConfig:
        return TokenPolicyConfig(self.embed_dim, self.layers, self.heads, self.ff_dim)


EXP_UNDERFLOW = {torch.float32: -104.0, torch.float64: -746.0}  # exp(x) is exactly 0 for x below these


def underflow_safe_exp(x: torch.Tensor) -> torch.Tensor:
    """``x.exp()`` to the last bit, written over ``x``: the entries below the dtype's
    :data:`EXP_UNDERFLOW` (whose exp is 0) are not exponentiated. On CPU, float32 exp takes a slow
    path for every vector of entries that holds one below -87, and masked logits (:data:`MASKED`)
    are such entries: most of a flat action's are (704 actions, a few dozen valid), and their exps
    cost 3 times the rest."""
    bound = EXP_UNDERFLOW.get(x.dtype)
    if bound is None:
        return x.exp_()
    under = x < bound
    return x.masked_fill_(under, 0).exp_().masked_fill_(under, 0)


def _logsumexp_values(x: torch.Tensor) -> torch.Tensor:
    """torch's arithmetic of ``x.logsumexp(-1, keepdim=True)``: the row maxima (0 where infinite)
    taken out, the exps summed, the log, the maxima added back."""
    maxes = x.amax(-1, keepdim=True)
    maxes.masked_fill_(maxes.abs() == math.inf, 0)
    return underflow_safe_exp(x - maxes).sum(-1, keepdim=True).log_().add_(maxes)


class _LogSumExp(torch.autograd.Function):
    """``x.logsumexp(-1, keepdim=True)`` with torch's gradient, ``grad * exp(x - result)``, both
    through :func:`underflow_safe_exp`."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        result = _logsumexp_values(x)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        x, result = ctx.saved_tensors
        return grad * underflow_safe_exp(x - result)


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """``x.logsumexp(-1, keepdim=True)``, the same values and gradients to the last bit, faster on
    masked logits (:func:`underflow_safe_exp`)."""
    return _LogSumExp.apply(x) if x.requires_grad and torch.is_grad_enabled() else _logsumexp_values(x)


def inverse_transform_draw(probs: torch.Tensor) -> torch.Tensor:
    """One category per distribution over the last dimension of ``probs``, by inverse transform:
    a uniform draw ``u`` (torch's global generator) scaled to the row's total, against the
    cumulative probabilities; category ``k`` when ``cdf[k-1] <= u < cdf[k]``, so a category of
    probability 0 is never drawn, nor when ``u`` rounds up to the total (about one draw in 2**24:
    then the last category the total grew at). An exact draw from ``probs`` at a fraction of
    ``torch.multinomial``'s cost on a CPU: a tenth over tau2's 10,000 flat actions."""
    cdf = probs.cumsum(-1)
    total = cdf[..., -1:]
    u = torch.rand(total.shape, dtype=cdf.dtype, device=cdf.device) * total
    return torch.minimum((cdf <= u).sum(-1), (cdf < total).sum(-1))


class Categorical:
    """A batch of categorical distributions over the last dimension of ``logits``: the arithmetic
    of ``torch.distributions.Categorical(logits=...)`` (the same normalisation, log-probabilities,
    entropies and gradients, to the last bit) without its argument validation and broadcasting,
    which cost more than a small network's forward pass. Samples are drawn from the same
    distribution by :func:`inverse_transform_draw`, not by torch's ``multinomial`` (whose cost
    grows with the number of actions: 4 ms a rollout step over tau2's flat actions)."""

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = logits - logsumexp(logits)  # log-probabilities

    @functools.cached_property
    def probs(self) -> torch.Tensor:  # computed when first needed, as torch does (the order gradients add up in)
        return self.logits.softmax(-1)

    def sample(self) -> torch.Tensor:
        return inverse_transform_draw(self.probs)

    def mode(self) -> torch.Tensor:
        return self.probs.argmax(-1)

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        return self.logits.gather(-1, value.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.logits.clamp(min=torch.finfo(self.logits.dtype).min) * self.probs).sum(-1)


class MultiCategorical:
    """Independent categorical distributions, one per action dimension of sizes ``nvec``, over
    the consecutive splits of ``logits`` (SB3's ``MultiCategoricalDistribution``): computed at
    once on the splits padded to one width, rather than one distribution per dimension, several
    times fewer tensor operations for a small network. Log-probabilities and entropies are the
    sums over the dimensions."""

    def __init__(self, nvec: Sequence[int]) -> None:
        self.width, self.dims = max(nvec), len(nvec)
        self.places = torch.as_tensor([d * self.width + i for d, n in enumerate(nvec) for i in range(n)])  # of each logit

    def log_probs(self, logits: torch.Tensor) -> torch.Tensor:
        """``[batch, dims, width]`` log-probabilities, -inf past each dimension's size."""
        padded = logits.new_full((logits.shape[0], self.dims * self.width), float("-inf"))
        return padded.index_copy(1, self.places.to(logits.device), logits).view(-1, self.dims, self.width).log_softmax(-1)

    def sample(self, log_probs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """A category per dimension (:func:`inverse_transform_draw`), or the likeliest."""
        if deterministic:
            return log_probs.argmax(-1)
        return inverse_transform_draw(log_probs.exp())

    @staticmethod
    def log_prob(log_probs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        return log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1).sum(-1)

    @staticmethod
    def entropy(log_probs: torch.Tensor) -> torch.Tensor:
        finite = log_probs.clamp(min=torch.finfo(log_probs.dtype).min)  # 0 * -inf would be nan
        return -(finite * log_probs.exp()).sum((-2, -1))


def masked_categorical(logits: torch.Tensor, mask: torch.Tensor) -> Categorical:
    return Categorical(logits=torch.where(mask, logits, torch.full_like(logits, MASKED)))


def layer_init(layer: nn.Linear, std: float = math.sqrt(2), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights, constant bias (CleanRL's initialisation)."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class MLPPolicy(nn.Module):
    """CleanRL's PPO actor-critic for vector observations and a ``Discrete`` (``n_actions`` an
    int) or ``MultiDiscrete`` (``n_actions`` a list: one independent categorical per dimension,
    as SB3's ``MlpPolicy``) action space. A ``Discrete`` action reads ``masks.action`` when given
    (a joint mask: the flat tool-call actions that are valid calls, as sb3-contrib's MaskablePPO does).

    A batch of wide observations (at least :data:`SPARSE_MIN_ROWS` rows of
    :data:`SPARSE_INPUT_DIM` features, as an update's minibatch of bags of token counts, mostly
    zeros) enters the first layers through the columns that are not zero in every row: the
    same outputs and gradients as the full product (an all-zero column adds nothing to either),
    with a fraction of its work."""

    def __init__(self, obs_dim: int, n_actions: int | Sequence[int], hidden: int = 64) -> None:
        super().__init__()
        self.discrete = isinstance(n_actions, int)
        self.nvec = [n_actions] if self.discrete else [int(n) for n in n_actions]
        self.spec = {"kind": "mlp", "obs_dim": obs_dim, "n_actions": n_actions if self.discrete else self.nvec,
                     "hidden": hidden}
        self.dimensions = MultiCategorical(self.nvec)
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, sum(self.nvec)), std=0.01),
        )

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The actor's logits and the critic's value estimates of a ``[batch, obs_dim]`` observation."""
        obs, used = self._inputs(obs)
        return self._through(self.actor, obs, used), self._through(self.critic, obs, used).squeeze(-1)

    @staticmethod
    def _inputs(obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``obs`` as floats, and for a wide batch only its columns not zero in every row, with their indices
        (None: every column)."""
        obs = obs.float()
        if obs.dim() != 2 or obs.shape[1] < SPARSE_INPUT_DIM or obs.shape[0] < SPARSE_MIN_ROWS:
            return obs, None
        used = obs.abs().sum(0).nonzero().squeeze(1)  # NaN and inf count as used
        return obs.index_select(1, used), used

    @staticmethod
    def _through(layers: nn.Sequential, obs: torch.Tensor, used: torch.Tensor | None) -> torch.Tensor:
        """``layers`` applied to inputs :meth:`_inputs` gave: the first through the ``used`` columns' weights."""
        if used is None:
            return apply_layers(layers, obs)
        first = layers[0]
        return apply_layers(layers[1:], F.linear(obs, first.weight.index_select(1, used), first.bias))

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return apply_layers(self.critic, obs.float()).squeeze(-1)

    def value_head_parameters(self) -> Iterator[nn.Parameter]:
        """The weights only the value estimate uses (the whole critic)."""
        return self.critic.parameters()

    def get_action_and_value(self, obs: torch.Tensor, masks: Masks | None = None, action: torch.Tensor | None = None,
                             deterministic: bool = False):
        logits, value = self(obs)
        if self.discrete:
            dist = self._categorical(logits, masks)
            if action is None:
                action = dist.mode() if deterministic else dist.sample()
            return action, dist.log_prob(action), dist.entropy(), value
        log_probs = self.dimensions.log_probs(logits)
        if action is None:
            action = self.dimensions.sample(log_probs, deterministic)
        return action, self.dimensions.log_prob(log_probs, action), self.dimensions.entropy(log_probs), value

    def log_prob(self, obs: torch.Tensor, masks: Masks | None, action: torch.Tensor) -> torch.Tensor:
        """The log-probability of ``action`` (what behaviour cloning fits), from the actor alone: the values and
        gradients of :meth:`get_action_and_value`'s, without the critic's forward pass or the entropy."""
        logits = self._through(self.actor, *self._inputs(obs))
        if self.discrete:
            return self._categorical(logits, masks).log_prob(action)
        return self.dimensions.log_prob(self.dimensions.log_probs(logits), action)

    def greedy_action(self, obs: torch.Tensor, masks: Masks | None = None) -> torch.Tensor:
        """The likeliest action (what an evaluation plays), from the actor alone: :meth:`get_action_and_value`'s
        with ``deterministic=True``."""
        logits = self._through(self.actor, *self._inputs(obs))
        if self.discrete:
            return self._categorical(logits, masks).mode()
        return self.dimensions.sample(self.dimensions.log_probs(logits), deterministic=True)

    @staticmethod
    def _categorical(logits: torch.Tensor, masks: Masks | None) -> Categorical:
        return Categorical(logits=logits) if masks is None else masked_categorical(logits, masks.action)


def apply_layers(layers: nn.Sequential, hidden: torch.Tensor) -> torch.Tensor:
    """``layers`` applied in turn, a ``Linear`` or ``Tanh`` as the function its module calls
    (the same result, without the module call's overhead: a tenth of a rollout step's forward
    through CleanRL's MLP)."""
    for layer in layers:
        if isinstance(layer, nn.Linear):
            hidden = F.linear(hidden, layer.weight, layer.bias)
        elif isinstance(layer, nn.Tanh):
            hidden = torch.tanh(hidden)
        else:
            hidden = layer(hidden)
    return hidden


class TokenPolicy(nn.Module):
    """Transformer over token ids with a tool head and pointer heads over entity rows."""

    def __init__(self, context_len: int, entity_len: int, max_entities: int, arities: Sequence[int],
                 config: TokenPolicyConfig = TokenPolicyConfig(), n_agents: int = 0) -> None:
        super().__init__()
        self.spec = {"kind": "token", "context_len": context_len, "entity_len": entity_len,
                     "max_entities": max_entities, "arities": list(arities), "config": asdict(config),
                     "n_agents": n_agents}
        self.context_len, self.entity_len, self.max_entities = context_len, entity_len, max_entities
        self.n_tools, self.n_slots = len(arities), max(arities, default=0)
        self.register_buffer("arities", torch.as_tensor(list(arities), dtype=torch.long), persistent=False)
        d = config.embed_dim
        self.vocab_buckets, self.chunk = config.vocab_buckets, config.context_chunk
        self.token_embedding = nn.Embedding(config.vocab_buckets, d)
        nn.init.zeros_(self.token_embedding.weight)  # a token never seen in training stays silent...
        self.subword_embedding = None  # ... unless it shares character n-grams with seen ones
        if config.subword_buckets:
            self.subword_embedding = nn.Embedding(config.subword_buckets + 1, d, padding_idx=config.subword_buckets)
            nn.init.zeros_(self.subword_embedding.weight)
            features, weights = feature_table(config.subword_buckets)
            self.register_buffer("subword_features", torch.from_numpy(features), persistent=False)
            self.register_buffer("subword_weights", torch.from_numpy(weights), persistent=False)
        self.position_embedding = nn.Parameter(torch.randn(-(-context_len // self.chunk), d) * 0.02)
        self.row_embedding = nn.Parameter(torch.randn(max_entities, d) * 0.02)
        self.type_embedding = nn.Parameter(torch.randn(3, d) * 0.02)  # CLS, entity summary, context chunk
        self.row_mlp = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.LayerNorm(d))
        self.n_agents = n_agents
        self.agent_embedding = nn.Embedding(n_agents, d) if n_agents else None  # added to CLS: who acts
        if self.agent_embedding is not None:
            nn.init.normal_(self.agent_embedding.weight, std=0.02)
        layer = nn.TransformerEncoderLayer(d, config.heads, config.ff_dim, config.dropout, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.tool_head = nn.Sequential(layer_init(nn.Linear(d, d)), nn.Tanh(), layer_init(nn.Linear(d, self.n_tools), std=0.01))
        self.value_head = nn.Sequential(layer_init(nn.Linear(d, d)), nn.Tanh(), layer_init(nn.Linear(d, 1), std=1.0))
        self.tool_embedding = nn.Embedding(self.n_tools, d)
        self.slot_queries = nn.ModuleList(
            nn.Sequential(layer_init(nn.Linear(3 * d, d)), nn.Tanh(), layer_init(nn.Linear(d, d), std=0.01))
            for _ in range(self.n_slots)
        )
        self.entity_keys = layer_init(nn.Linear(d, d), std=1.0)

    # ----------------------------------------------------------------- encoder
    def token_vectors(self, ids: torch.Tensor) -> torch.Tensor:
        """Embedding of each id [N] -> [N, d]: its hashed word embedding plus the mean of its
        subword embeddings; zero for ``PAD_ID``."""
        vectors = self.token_embedding(ids % self.vocab_buckets)
        if self.subword_embedding is not None:
            vectors = vectors + nn.functional.embedding_bag(
                self.subword_features[ids], self.subword_embedding.weight, mode="sum",
                per_sample_weights=self.subword_weights[ids], padding_idx=self.subword_embedding.padding_idx)
        return torch.where((ids == PAD_ID)[:, None], torch.zeros_like(vectors), vectors)

    def pool(self, *groups: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """For each group tensor of ids [B, G, n]: (summed embedding of its non-PAD tokens [B, G, d],
        non-empty [B, G]). The distinct ids of all groups are embedded once, then summed per
        group. A sum, not a mean: tokens never seen in training (zero embeddings) change nothing."""
        distinct, index = torch.unique(torch.cat([g.flatten() for g in groups]), return_inverse=True)
        vectors = self.token_vectors(distinct)
        pooled, start = [], 0
        for ids in groups:
            group_index = index[start : start + ids.numel()].view(-1, ids.shape[-1])
            sums = nn.functional.embedding_bag(group_index, vectors, mode="sum").view(*ids.shape[:2], -1)
            pooled.append((sums, (ids != PAD_ID).any(-1)))
            start += ids.numel()
        return pooled

    def encode(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids [B, T] (``[B, 1 + T]`` with the agent id first when ``n_agents`` > 0) ->
        (CLS vector [B, d], entity-row vectors [B, E, d])."""
        obs = obs.long()
        batch = obs.shape[0]
        agent_ids, obs = (obs[:, 0], obs[:, 1:]) if self.n_agents else (None, obs)
        context = obs[:, : self.context_len]
        positions = torch.arange(1, context.shape[1] + 1, device=obs.device)
        used = int(((context != PAD_ID) * positions).max().clamp(min=1))  # up to the last real token: drop the pad tail
        chunks = -(-used // self.chunk)
        context = nn.functional.pad(context[:, :used], (0, chunks * self.chunk - used), value=PAD_ID)
        rows = obs[:, self.context_len :].view(batch, self.max_entities, self.entity_len)
        (chunk_vectors, chunk_filled), (row_vectors, row_filled) = self.pool(context.view(batch, chunks, self.chunk), rows)
        entities = self.row_mlp(row_vectors + self.row_embedding)
        filled = row_filled.float()[..., None]
        summary = (entities * filled).sum(1) / filled.sum(1).clamp(min=1)
        cls = self.type_embedding[0].expand(batch, 1, -1)
        if agent_ids is not None:
            cls = cls + self.agent_embedding(agent_ids)[:, None]
        sequence = torch.cat([cls, (summary + self.type_embedding[1])[:, None],
                              chunk_vectors + self.position_embedding[:chunks] + self.type_embedding[2]], dim=1)
        padding = torch.cat([torch.zeros(batch, 2, dtype=torch.bool, device=obs.device), ~chunk_filled], 1)
        hidden = self.norm(self.encoder(sequence, src_key_padding_mask=padding))
        return hidden[:, 0], entities

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.encode(obs)[0]).squeeze(-1)

    def value_head_parameters(self) -> Iterator[nn.Parameter]:
        """The weights only the value estimate uses (the value head; the encoder is shared)."""
        return self.value_head.parameters()

    # ------------------------------------------------------------------ heads
    def tool_mask(self, masks: Masks) -> torch.Tensor:
        """Tools the action mask allows whose every argument has at least one allowed entity row."""
        fillable = self.slot_masks(masks).any(-1)  # [B, tools, slots]
        needed = torch.arange(self.n_slots, device=fillable.device) < self.arities[:, None]  # [tools, slots]
        allowed = masks.action[:, : self.n_tools] & (fillable | ~needed).all(-1)
        return torch.where(allowed.any(-1, keepdim=True), allowed, masks.action[:, : self.n_tools])

    def slot_masks(self, masks: Masks) -> torch.Tensor:
        """[B, tools, slots, entities]: the argument mask intersected with the per-slot action mask."""
        per_slot = masks.action[:, self.n_tools :].view(-1, 1, self.n_slots, self.max_entities)
        return masks.argument & per_slot

    def get_action_and_value(self, obs: torch.Tensor, masks: Masks, action: torch.Tensor | None = None,
                             deterministic: bool = False):
        """Sample (or score) ``[tool, slot_1, ..., slot_k]``; slots past the tool's arity are 0
        and contribute nothing to the log-probability or entropy."""
        cls, entities = self.encode(obs)
        batch = cls.shape[0]
        tool_dist = masked_categorical(self.tool_head(cls), self.tool_mask(masks))
        tool = (tool_dist.mode() if deterministic else tool_dist.sample()) if action is None else action[:, 0].long()
        log_prob, entropy = tool_dist.log_prob(tool), tool_dist.entropy()
        slot_masks = self.slot_masks(masks)[torch.arange(batch, device=cls.device), tool]  # [B, slots, E]
        keys = self.entity_keys(entities)
        chosen_sum = torch.zeros_like(cls)
        slots = []
        tool_vector = self.tool_embedding(tool)
        for k in range(self.n_slots):
            active = k < self.arities[tool]
            query = self.slot_queries[k](torch.cat([cls, tool_vector, chosen_sum], -1))
            logits = torch.einsum("bed,bd->be", keys, query) / math.sqrt(keys.shape[-1])
            mask = torch.where(active[:, None], slot_masks[:, k], torch.arange(self.max_entities, device=cls.device) == 0)
            mask = torch.where(mask.any(-1, keepdim=True), mask, torch.arange(self.max_entities, device=cls.device) == 0)
            dist = masked_categorical(logits, mask)
            if action is None:
                slot = dist.mode() if deterministic else dist.sample()
                slot = torch.where(active, slot, torch.zeros_like(slot))
            else:
                slot = action[:, 1 + k].long()
            log_prob = log_prob + torch.where(active, dist.log_prob(slot), torch.zeros_like(log_prob))
            entropy = entropy + torch.where(active, dist.entropy(), torch.zeros_like(entropy))
            chosen_sum = chosen_sum + entities[torch.arange(batch, device=cls.device), slot] * active[:, None]
            slots.append(slot)
        value = self.value_head(cls).squeeze(-1)
        return torch.stack([tool, *slots], 1), log_prob, entropy, value

    def log_prob(self, obs: torch.Tensor, masks: Masks, action: torch.Tensor) -> torch.Tensor:
        """The log-probability of ``action`` (what behaviour cloning fits)."""
        return self.get_action_and_value(obs, masks, action)[1]

    def greedy_action(self, obs: torch.Tensor, masks: Masks) -> torch.Tensor:
        """The likeliest action (what an evaluation plays)."""
        return self.get_action_and_value(obs, masks, deterministic=True)[0]


def build_policy(spec: dict[str, Any]) -> nn.Module:
    """Rebuild a policy from its ``spec`` (as stored in checkpoints)."""
    if spec["kind"] == "mlp":
        return MLPPolicy(spec["obs_dim"], spec["n_actions"], spec["hidden"])  # an int (Discrete) or a list
    if spec["kind"] == "token":
        return TokenPolicy(spec["context_len"], spec["entity_len"], spec["max_entities"], spec["arities"],
                           TokenPolicyConfig(**spec["config"]), spec.get("n_agents", 0))
    raise ValueError(f"unknown policy kind {spec['kind']!r}")


def masks_from_info(info: dict[str, Any], device: torch.device | str = "cpu") -> Masks:
    """:class:`Masks` from a (vector or single) env's info, batched (``argument`` None where the
    info has no argument mask: a flat action's joint mask)."""
    action = np.asarray(info["action_mask"], dtype=bool)
    argument = np.asarray(info["argument_mask"], dtype=bool) if "argument_mask" in info else None
    if action.ndim == 1:
        action, argument = action[None], None if argument is None else argument[None]
    return Masks(torch.as_tensor(action, device=device), None if argument is None else torch.as_tensor(argument, device=device))

"""The Trace: everything the app shows, as plain float32 numpy arrays on the CPU.

Nothing in viz/ or the app needs torch: they read a Trace.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from model.buffers import empty
from model.transformer import Recording


@dataclass
class AttentionTrace:
    """One kind of attention across all layers and heads of one sentence.

    kind     "self" (lm, mlm), "encoder", "decoder" or "cross" (dates)
    inputs   (L, t, k)     vectors entering each layer's attention, query side
    q        (L, H, t, d)  queries;  k, v (L, H, s, d) keys and values
    scores   (L, H, t, s)  raw q·k before scaling and masking; None in a trace kept for the app's views
                           (for_views): every view that shows scores computes one head's from q and k
    probs    (L, H, t, s)  attention weights; each row sums to 1
    mask     (t, s) bool   True where a query may attend to a key
    queries, keys          readable token labels for rows and columns
    With a detailed trace (api.LoadedModel.trace(detail=True)), else None:
    output   (L, t, k)     what each layer's attention adds to the residual stream (W_O applied, b_O added)
    out_weight  L × (k, H·d)  each layer's W_O, head h in columns h·d … (h+1)·d (views of the weights)
    out_bias (L, k)        each layer's b_O
    """

    kind: str
    inputs: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray | None
    probs: np.ndarray
    mask: np.ndarray
    queries: list[str]
    keys: list[str]
    output: np.ndarray | None = None
    out_weight: tuple | None = None
    out_bias: np.ndarray | None = None

    @property
    def n_layers(self) -> int:
        return self.probs.shape[0]

    @property
    def n_heads(self) -> int:
        return self.probs.shape[1]

    @property
    def causal(self) -> bool:
        return bool(not self.mask[np.triu_indices_from(self.mask, k=1)].any()) if self.mask.shape[0] > 1 else False


@dataclass
class Trace:
    """One forward pass of one model on one input.

    tokens / ids             what the model read (the source, for the encoder-decoder)
    token_embeddings (t, k)  embedding vectors as added to the positions
    position_embeddings (t, k)
    normed_input (t, k)      LayerNorm(token + position), what layer 1 reads, for a model that normalises the sum
                             (BERT); None where layer 1 reads the sum itself
    attention                kind -> AttentionTrace
    target_tokens / target_ids  the decoder's side (encoder-decoder only)
    predictions              the model's top token at each query row (next token for lm
                             and dates' decoder, the token at that position for mlm)
    truncated                True when the input was cut to the model's context
    residual                 stack -> (L, t, k), the residual stream after each layer before any final
                             norm ("self", or "encoder" and "decoder"); a detailed trace only, else empty
    """

    model: str
    arch: str
    tokens: list[str]
    ids: np.ndarray
    token_embeddings: np.ndarray
    position_embeddings: np.ndarray
    attention: dict[str, AttentionTrace]
    target_tokens: list[str] = field(default_factory=list)
    target_ids: np.ndarray | None = None
    predictions: list[str] = field(default_factory=list)
    truncated: bool = False
    d_head: int = 0
    residual: dict[str, np.ndarray] = field(default_factory=dict)
    normed_input: np.ndarray | None = None


def for_views(trace: Trace) -> Trace:
    """The trace as the app keeps it between requests: without the raw scores of every head (as large as
    the weights themselves; a view that shows scores computes its one head's from q and k). The arrays
    are shared with `trace`, not copied."""
    attention = {kind: replace(att, scores=None) for kind, att in trace.attention.items()}
    return replace(trace, attention=attention)


def host_array(x) -> np.ndarray:
    """A tensor as a float32 numpy array on the host (shared with the tensor where it is float32 on the CPU)."""
    if x.dtype == torch.float32 and x.device.type == "cpu":  # most traces: no conversion call to pay for
        return x.detach().numpy()
    return x.detach().float().cpu().numpy()


_np = host_array


def to_host(trace: Trace) -> Trace:
    """A trace kept on its device (on_device=True) with every tensor copied to the host as numpy (float32),
    what the views that read every weight take."""
    def host(value):
        return host_array(value) if isinstance(value, torch.Tensor) else value

    def attention(att: AttentionTrace) -> AttentionTrace:
        return dataclasses.replace(att, **{f.name: host(getattr(att, f.name)) for f in dataclasses.fields(att)
                                           if isinstance(getattr(att, f.name), torch.Tensor)},
                                   out_weight=None if att.out_weight is None else tuple(map(host, att.out_weight)))

    return dataclasses.replace(
        trace, token_embeddings=host(trace.token_embeddings), position_embeddings=host(trace.position_embeddings),
        normed_input=host(trace.normed_input), residual={k: host(v) for k, v in trace.residual.items()},
        attention={kind: attention(att) for kind, att in trace.attention.items()})


def _cat(tensors: list[torch.Tensor]) -> torch.Tensor:
    """torch.cat along the first axis, float32 on the CPU into memory an earlier trace used (model/buffers.py:
    a 12 x 12-head trace's inputs, q, k and v at 512 tokens are 75 MB)."""
    first = tensors[0]
    if first.dtype != torch.float32 or first.device.type != "cpu" or torch.is_grad_enabled():
        return torch.cat(tensors)  # (out= records no gradient)
    return torch.cat(tensors, out=empty((sum(len(x) for x in tensors), *first.shape[1:]), first.device))


def _kept(x) -> torch.Tensor:
    """A tensor left where it is (a trace kept on its device: experiments.view_numbers)."""
    return x.detach()


def attention_trace(kind: str, records, queries: list[str], keys: list[str], detail: bool = False,
                    scores: bool = True, on_device: bool = False, stacked=None) -> AttentionTrace:
    """Stack one HeadsRecord per layer (batch of one) into (L, H, ...) arrays; scores=False leaves the raw
    scores out (None, as for_views keeps them): copying them costs as much as the weights.
    on_device=True: the arrays stay torch tensors where the model computed them (the mask is numpy).
    stacked: the (L, H, t, s) weights the forward pass wrote every layer's into (Recording(stack=True)), used
    as they are where every record's weights are still its layer's slice of them."""
    convert = _kept if on_device else _np
    first = records[0]
    if first.probs.shape[0] != 1:
        raise ValueError(f"a trace holds one input, got a batch of {first.probs.shape[0]}")
    t, s = first.probs.shape[-2:]
    mask = np.ones((t, s), dtype=bool)
    if first.mask is not None:
        mask = np.broadcast_to(first.mask.detach().cpu().numpy(), first.probs.shape[:-2] + (t, s))
        mask = np.array(mask.reshape(-1, t, s)[0])
    if stacked is not None and not (len(stacked) == len(records) and all(
            r.probs.data_ptr() == stacked[i].data_ptr() and r.probs.shape == stacked[i:i + 1].shape
            for i, r in enumerate(records))):
        stacked = None  # a knocked-out head's weights were replaced (a copy), or the layers are not these

    def layers(step: str) -> np.ndarray:
        if step == "probs" and stacked is not None:  # written in place by the forward pass: no copy
            return convert(stacked)
        # the batch of one is the layer axis: one torch op and one copy per step, not one per layer
        return convert(_cat([getattr(r, step) for r in records]))

    extra = {}
    if detail:
        bias = [r.out_bias if r.out_bias is not None else torch.zeros_like(r.out_weight[:, 0]) for r in records]
        extra = dict(output=layers("output"), out_weight=tuple(convert(r.out_weight) for r in records),
                     out_bias=convert(torch.stack(bias)))
    return AttentionTrace(
        kind=kind,
        inputs=layers("inputs"),
        q=layers("q"),
        k=layers("k"),
        v=layers("v"),
        scores=layers("scores") if scores else None,
        probs=layers("probs"),
        mask=mask,
        queries=list(queries),
        keys=list(keys),
        **extra,
    )


def from_recording(
    recording: Recording,
    *,
    model: str,
    arch: str,
    d_head: int,
    tokens: list[str],
    ids,
    target_tokens: list[str] | None = None,
    target_ids=None,
    predictions: list[str] | None = None,
    truncated: bool = False,
    scores: bool = True,
    on_device: bool = False,
) -> Trace:
    """on_device=True: every array stays a torch tensor where the model computed it (experiments.view_numbers reads
    it there; model.trace.to_host copies it to the host), except ids and the masks."""
    convert = _kept if on_device else _np
    target_tokens = target_tokens or []
    labels = {
        "self": (tokens, tokens),
        "encoder": (tokens, tokens),
        "decoder": (target_tokens, target_tokens),
        "cross": (target_tokens, tokens),
    }
    side = "input" if "input" in recording.embeddings else "source"
    return Trace(
        model=model,
        arch=arch,
        tokens=list(tokens),
        ids=np.asarray(ids, dtype=np.int64),
        token_embeddings=convert(recording.embeddings[side][0]),
        position_embeddings=convert(recording.positions[side]),
        attention={kind: attention_trace(kind, recs, *labels[kind], detail=recording.detail, scores=scores,
                                         on_device=on_device, stacked=recording.stacks.get(kind))
                   for kind, recs in recording.layers.items()},
        target_tokens=list(target_tokens),
        target_ids=None if target_ids is None else np.asarray(target_ids, dtype=np.int64),
        predictions=list(predictions or []),
        truncated=truncated,
        d_head=d_head,
        residual={stack: convert(torch.cat(xs)) for stack, xs in recording.residual.items()},
        normed_input=convert(recording.normed[side][0]) if side in recording.normed else None,
    )

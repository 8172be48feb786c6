"""Tolerances derived from the computation, never tuned to one processor (issue 58).

Two implementations of the same float32 arithmetic (numpy against torch, a fast path against the explicit one) may
sum in another order and use another libm or BLAS kernel: each step then rounds differently, by at most a known
amount. These helpers write that amount down, so that a test passes on any x86 processor (Intel or AMD, AVX2 or
AVX-512) and still fails when a number is really wrong:

- one float32 rounding moves a value by at most half its spacing, np.spacing(np.float32(x)) (2^-24 relative);
- a sum (or dot product) of n terms, in any order, is within (n - 1) * 2^-24 * sum(|term|) of the exact one
  (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4), so two orders are within twice that;
- a float32 exp, sin or cos from any libm or SIMD kernel (glibc, numpy's, torch's SLEEF) is within 2 spacings of
  the true result, so two kernels within 4 (LIBM_ULPS); a change of the argument by d changes sin and cos by at
  most d.
"""
from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)  # 2^-23: the spacing of float32 numbers between 1 and 2
EPS64 = float(np.finfo(np.float64).eps)  # 2^-52: float64's (one float64 rounding: 2^-53 relative, 2^-29 of float32's)
LIBM_ULPS = 4  # two float32 exp/sin/cos kernels differ by at most this many spacings of their result


def spacing32(x) -> np.ndarray:
    """The distance from |x| to the next float32, elementwise (np.spacing of float32 is never negative for x >= 0)."""
    return np.spacing(np.abs(np.asarray(x, dtype=np.float32)))


def summed(n: int, total) -> float | np.ndarray:
    """Two float32 sums of n terms with sum(|term|) = total, each in its own order, differ by at most this."""
    return 2 * max(n - 1, 1) * (EPS32 / 2) * np.asarray(total, dtype=np.float64)


def product(a, b) -> np.ndarray:
    """Two float32 products a @ b from different kernels (BLAS, torch, numpy; any blocking or FMA) differ at most by
    this, elementwise: the bound for n-term sums applied to |a| @ |b|, plus the final rounding of each."""
    a, b = np.abs(np.asarray(a, dtype=np.float64)), np.abs(np.asarray(b, dtype=np.float64))
    total = a @ b
    return summed(a.shape[-1], total) + EPS32 * total


def sinusoid(angle) -> np.ndarray:
    """Two float32 sin/cos tables whose angles are position * frequency, the frequency from two libms' exp: the
    frequencies may differ by one spacing (relative 2^-23), which moves the angle by < 2 of its spacings, the two
    roundings of the product add one more, and the two sin/cos kernels differ by LIBM_ULPS spacings of a value
    below 1 (each at most EPS32 / 2)."""
    return 3 * spacing32(angle) + LIBM_ULPS / 2 * EPS32


def weights_sum(s: int) -> float:
    """How far a float32 softmax row of s weights e_j / S, summed again in float32, may be from 1: its sum S's
    rounding and the second sum's ((s - 1) x 2^-24 of 1 each: summed(s, 1)), and the division by S (or the
    multiplication by a rounded 1 / S: two roundings of 2^-24)."""
    return float(summed(s, 1.0)) + EPS32


def softmax_rows(scores_error, probs) -> np.ndarray:
    """How far two float32 softmaxes of the same row may differ, elementwise, when their inputs differ by up to
    scores_error (elementwise, same shape as probs): exp(s_j - max) moves by the change of s_j and of the max (twice
    the row's worst input error, relative) plus its libm's spacings, and the row's sum of t terms adds its bound."""
    probs = np.abs(np.asarray(probs, dtype=np.float64))
    worst = np.max(np.asarray(scores_error, dtype=np.float64) * np.ones_like(probs), axis=-1, keepdims=True)
    t = probs.shape[-1]
    return probs * (2 * worst + LIBM_ULPS * EPS32 + summed(t, 1.0) + EPS32)


def attention(q, k, v, scale: float = 1.0, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, probs, output) bounds, elementwise, for two float32 implementations of softmax(scale q kᵀ) v; mask
    (True where a query may see a key) gives a masked key probability 0 in both, so it adds nothing."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    exact = scale * q @ np.swapaxes(k, -1, -2)
    scores = abs(scale) * product(q, np.swapaxes(k, -1, -2)) + EPS32 * np.abs(exact)
    if mask is not None:
        exact = np.where(np.asarray(mask, dtype=bool), exact, -np.inf)
    probs = np.exp(exact - exact.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    probs_error = softmax_rows(scores, probs)
    output = probs_error @ np.abs(v) + product(probs, v)
    return scores, probs_error, output


def mean_entropy_bits(att, layer: int, head: int) -> float:
    """The bound on one head's mean entropy in bits, as Step by step's caption (2 places) and the head statistics'
    table (3 places) both compute it, beside the roundings: two float32 softmaxes of the same q and k
    (attention's δ) move p ln p by at most δ (|ln p_low| + 1), or by both values where a weight may reach 0; the
    table's float32 log2 terms add 2 spacings and a product (2.5 EPS32 of each), the panel's float32 result half a
    spacing; averaged over the same rows as both do (a first token that sees only itself is left out)."""
    q, k = att.q[layer, head], att.k[layer, head]
    p = att.probs[layer, head].astype(np.float64)
    _, delta, _ = attention(q, k, k, q.shape[-1] ** -0.5, att.mask)
    low, high = np.maximum(p - delta, 0), np.minimum(p + delta, 1)
    moved = np.where(low > 0, delta * (np.abs(np.log(np.where(low > 0, low, 1))) + 1),
                     2 * high * np.abs(np.log(np.where(high > 0, high, 1))))
    bits = -(p * np.log(np.where(p > 0, p, 1))).sum(-1) / np.log(2)
    rows = slice(1 if att.mask[0].sum() == 1 else 0, None)
    return float((moved.sum(-1) / np.log(2) + 2.5 * EPS32 * bits + EPS32 / 2 * bits)[rows].mean())


def layer_output(probs, v, w_out, bias=None) -> np.ndarray:
    """The bound, elementwise on (t, k), for two float32 computations of a layer's output Σ_h W_O^h (probs_h v_h) + b
    from the same float32 weights probs (H, t, s), values v (H, s, d; one set per query head) and W_O (k, H·d):
    each head's s-term product (product()), carried through W_O as |error| @ |W_O|ᵀ, then W_O's own H·d-term
    product with the bias added as one more term of that sum (its n-term bound and the result's rounding)."""
    p, v, w = (np.asarray(x, dtype=np.float64) for x in (probs, v, w_out))
    heads, t, d = p.shape[0], p.shape[1], v.shape[-1]
    joined = lambda x: np.swapaxes(x, 0, 1).reshape(t, heads * d)  # (t, H·d), as the layer joins its heads
    total = np.abs(joined(p @ v)) @ np.abs(w).T + (0 if bias is None else np.abs(np.asarray(bias, np.float64)))
    return joined(product(p, v)) @ np.abs(w).T + summed(heads * d + 1, total) + EPS32 * total


def attention_layer(q, k, v, scale: float, mask, w_out) -> np.ndarray:
    """The bound, elementwise on (b, t, k), for two float32 attention layers given the same q, k, v (b, h, t, d) (the
    same projections of the same input, bit for bit) that differ in how they attend (explicit softmax against a
    fused kernel, keys in another order): each head's output within attention()'s bound, carried through W_O
    (k, h·d) as |error| @ |W_O|ᵀ, plus the product's own rounding and the bias's addition."""
    _, _, heads_error = attention(q, k, v, scale, mask)  # (b, h, t, d)
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    logits = scale * q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        logits = np.where(np.asarray(mask, dtype=bool), logits, -np.inf)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    heads = (probs / probs.sum(-1, keepdims=True)) @ v  # (b, h, t, d)
    b, h, t, d = heads.shape
    joined = lambda x: np.swapaxes(x, 1, 2).reshape(b, t, h * d)  # (b, t, h·d), as the layer joins its heads
    w = np.asarray(w_out, dtype=np.float64)
    return joined(heads_error) @ np.abs(w).T + product(joined(heads), w.T) + EPS32 * np.abs(joined(heads) @ w.T)


def reordered(inputs, w_q, w_k, q, k, probs, scale: float) -> np.ndarray:
    """The bound, elementwise on probs (h, t, s), for one self-attention layer's weights computed twice from the same
    input rows (t, k) in another order (a shuffled sentence, read back in the first order): each row's q and k are
    products of the same k terms that a kernel may sum otherwise at another row (product, plus a bias's rounding),
    which moves the scores by |Δq| |k|ᵀ + |q| |Δk|ᵀ on top of their own d-term sums, and the softmax sums its row in
    another order. w_q (h·d, k), w_k (h_kv·d, k); q, k (h, t, d) as recorded (key heads shared, h_kv ≤ h)."""
    x = np.asarray(inputs, dtype=np.float64)
    q, k = (np.abs(np.asarray(y, dtype=np.float64)) for y in (q, k))
    heads, t, d = q.shape

    def per_head(w):  # (t, h_x·d) -> (h, t, d), each key head repeated for the query heads it serves
        y = product(x, np.asarray(w, dtype=np.float64).T)
        return np.repeat(y.reshape(t, -1, d).transpose(1, 0, 2), heads // (y.shape[-1] // d), axis=0)

    dq, dk = per_head(w_q) + EPS32 * q, per_head(w_k) + EPS32 * k
    kt = k.transpose(0, 2, 1)
    moved = dq @ kt + q @ dk.transpose(0, 2, 1)  # what the q and k rows' own differences do to the scores
    scores = abs(scale) * (product(q, kt) + moved + EPS32 * q @ kt)
    return softmax_rows(scores, probs)


def assert_within(actual, expected, tolerance, err_msg: str = "") -> None:
    """|actual - expected| <= tolerance elementwise (np.testing.assert_allclose takes only one number): the message
    names the worst element, by how much it is off and what it was allowed there."""
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{err_msg} shapes {actual.shape} vs {expected.shape}"
    off = np.abs(actual - expected)
    allowed = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), off.shape)
    if not (off <= allowed).all():
        at = np.unravel_index(np.argmax(np.where(off <= allowed, -np.inf, off - allowed)), off.shape)
        raise AssertionError(f"{err_msg} at {at}: {actual[at]:.9g} vs {expected[at]:.9g}, off by {off[at]:.3g}, "
                             f"allowed {allowed[at]:.3g}")


# ---- whole models against an oracle ------------------------------------------------------------------------------
# A whole forward pass (embeddings, every layer's products of hundreds of terms, norms, softmaxes, activations) has no
# useful closed-form bound: Higham's n-term bound, carried through every layer's amplification, allows errors of
# 1e-2 where two float32 implementations differ by 1e-6, and would let real faults through. Its float32 rounding is
# measured on the input itself instead: the oracle run once in float32 and once in float64 (float64's own rounding,
# 2^-53 relative, is 2^-29 of float32's) gives E, how far float32 rounding moved each quantity there, on this
# processor with its own kernels. Ours sums the same terms in its own order, so its error is of the same size
# (Higham's bound does not depend on the order): within ORACLE_TIMES x E of exact, ours and the oracle's float32 are
# within (ORACLE_TIMES + 1) x E of each other, plus a few spacings of each value (what float64 cannot see of the
# parts transformers itself keeps in float32: a llama softmax, rotary angles).
ORACLE_TIMES = 3  # ours may round up to 3x as much as the oracle does


def beside_oracle(ours, oracle32, oracle64) -> np.ndarray:
    """Elementwise, how far ours may be from the oracle's float32 result: (ORACLE_TIMES + 1) x the oracle's worst
    float32 rounding on this input (max |oracle32 - oracle64|), plus LIBM_ULPS spacings of each value."""
    oracle32, oracle64 = (np.asarray(x, dtype=np.float64) for x in (oracle32, oracle64))
    rounding = np.abs(oracle32 - oracle64).max() if oracle32.size else 0.0
    return (ORACLE_TIMES + 1) * rounding + LIBM_ULPS * spacing32(oracle64)


_DOUBLES: dict[int, tuple] = {}  # id(model) -> (model, its float64 copy): the oracles are module-scoped fixtures


def in_float64(model):
    """A float64 copy of a torch model (made once per model; the original stays float32)."""
    import copy

    kept = _DOUBLES.get(id(model))
    if kept is None or kept[0] is not model:
        kept = _DOUBLES[id(model)] = (model, copy.deepcopy(model).double())
    return kept[1]

"""Positional encodings: the paper's sinusoids by hand, and what positions do to
permutation equivariance of a whole model."""
import math

import pytest
import torch

from model.config import TransformerConfig
from model.positions import LearnedPositions, NoPositions, SinusoidalPositions, sinusoidal_encoding
from model.transformer import MaskedLM
from tests import tolerances


def angle(pos: int, dim: int, k: int) -> float:
    return pos / 10000 ** (2 * (dim // 2) / k)


def paper(pos: int, dim: int, k: int) -> float:
    """PE(pos, 2i) = sin(pos / 10000^(2i/k)), PE(pos, 2i+1) = cos(pos / 10000^(2i/k))."""
    return math.sin(angle(pos, dim, k)) if dim % 2 == 0 else math.cos(angle(pos, dim, k))


@pytest.mark.parametrize("k", [16, 64, 7])
def test_sinusoidal_matches_the_papers_formula(k):
    pe = sinusoidal_encoding(50, k)
    assert pe.shape == (50, k)
    for pos in (0, 1, 2, 9, 31, 49):
        for dim in sorted({0, 1, 2, 3, k // 2, k - 2, k - 1}):
            # float32's exp, product and sin against float64's: within what two libms may differ at this angle
            allowed = float(tolerances.sinusoid(angle(pos, dim, k)))
            assert pe[pos, dim].item() == pytest.approx(paper(pos, dim, k), abs=allowed), (pos, dim)


def test_sinusoidal_hand_values():
    pe = sinusoidal_encoding(3, 4)
    # k=4: dims 0,1 use frequency 1; dims 2,3 use 1/100
    expected = torch.tensor([
        [0.0, 1.0, 0.0, 1.0],
        [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)],
        [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)],
    ])
    torch.testing.assert_close(pe, expected)


def test_sinusoidal_positions_are_fixed_and_not_saved():
    module = SinusoidalPositions(10, 8)
    assert list(module.parameters()) == []
    assert module.state_dict() == {}
    torch.testing.assert_close(module(4), sinusoidal_encoding(10, 8)[:4])


def test_learned_positions_are_one_trained_vector_per_position():
    module = LearnedPositions(10, 8)
    assert sum(p.numel() for p in module.parameters()) == 10 * 8
    assert module(3).shape == (3, 8)
    assert module(3).requires_grad


def test_no_positions_adds_zeros():
    assert torch.equal(NoPositions(10, 8)(4), torch.zeros(4, 8))


def test_no_positions_follows_the_model_and_saves_nothing():
    module = NoPositions(10, 8).to(torch.float64)  # as .to(device) moves it: its zeros go with the model
    assert module(4).dtype == torch.float64
    assert module.state_dict() == {}  # checkpoints saved before it held a buffer still load


def masked_lm(positions: str) -> MaskedLM:
    torch.manual_seed(0)
    config = TransformerConfig(arch="encoder", vocab_size=40, max_len=16, d_model=16, n_heads=2, n_layers=2,
                               d_ff=32, dropout=0.0, positions=positions)
    return MaskedLM(config).eval()


IDS = torch.tensor([[5, 17, 9, 30, 12, 21, 7, 33]])
PERM = torch.tensor([3, 7, 0, 5, 1, 6, 2, 4])


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_encoder_without_positions_is_permutation_equivariant(norm):
    torch.manual_seed(0)
    config = TransformerConfig(arch="encoder", vocab_size=40, max_len=16, d_model=16, n_heads=2, n_layers=2,
                               d_ff=32, dropout=0.0, positions="none", norm=norm)
    model = MaskedLM(config).eval()
    with torch.no_grad():
        logits, _ = model(IDS)
        permuted, _ = model(IDS[:, PERM])
        exact, _ = tolerances.in_float64(model)(IDS)  # the fused path: float64 throughout
    # the permuted pass sums the same terms in another order: within 3x the plain pass's own float32 rounding
    expected = logits[:, PERM]
    tolerances.assert_within(permuted, expected, tolerances.beside_oracle(permuted, expected, exact[:, PERM]))


@pytest.mark.parametrize("positions", ["sinusoidal", "learned"])
def test_positional_encoding_breaks_permutation_equivariance(positions):
    model = masked_lm(positions)
    with torch.no_grad():
        logits, _ = model(IDS)
        permuted, _ = model(IDS[:, PERM])
    assert not torch.allclose(permuted, logits[:, PERM], atol=1e-4)

"""The fixed-order kernel of numerics version 5 (agentrl/agent/matmul.py): each output is one chain of fused
multiply-adds over the summed dimension in order, checked against that chain computed exactly (fractions) and rounded
once per step, on small shapes; the same bits in every layout, call and thread setting; and the default (version 4) is
torch's.
"""
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from agentrl.agent import matmul
from agentrl import numerics

pytestmark = pytest.mark.skipif(not {'avx2', 'fma'} <= numerics.this_cpu().flags, reason='the kernel needs AVX2, FMA')


def rounded(x: Fraction) -> np.float32:
    """x rounded to the nearest float32, ties to even: exactly, from its neighbours (no float64 rounding in between)."""
    guess = np.float32(float(x))
    candidates = [guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(c.view(np.int32)) & 1))


def reference(a: np.ndarray, b: np.ndarray, scale=None, bias=None) -> np.ndarray:
    """a [M, K] @ b [K, N] as the kernel promises: acc = fma(a[m, k], b[k, n], acc) for k in order from +0, each fma
    rounded once; then * scale, + bias[n], each a float32 operation."""
    M, K = a.shape
    out = np.zeros((M, b.shape[1]), dtype=np.float32)
    for m in range(M):
        for n in range(b.shape[1]):
            acc = np.float32(0)
            for k in range(K):
                acc = rounded(Fraction(float(a[m, k])) * Fraction(float(b[k, n])) + Fraction(float(acc)))
            if scale is not None:
                acc = np.float32(acc * np.float32(scale))
            if bias is not None:
                acc = np.float32(acc + bias[n])
            out[m, n] = acc
    return out


def random(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize('M, K, N', [(1, 1, 1), (3, 7, 5), (7, 13, 9), (9, 5, 17), (13, 31, 40)])
def test_each_output_is_one_fma_chain_in_order(M, K, N):
    a, b = random(M, K, seed=M), random(K, N, seed=N) * 1e3  # wide magnitudes: rounding in every step
    assert np.array_equal(matmul.product(a, b).numpy(), reference(a.numpy(), b.numpy()))
    bias = random(N, seed=K)
    assert np.array_equal(matmul.product(a, b, scale=0.3, bias=bias).numpy(),
                          reference(a.numpy(), b.numpy(), np.float32(0.3), bias.numpy()))


LAYOUTS = {  # b [K, N] as a product meets it: rows read in place, or packed first (8 x 8 blocks where transposed)
    'rows': lambda b: b,
    'transposed': lambda b: b.t().contiguous().t(),
    'strided': lambda b: torch.zeros(b.shape[0], 2 * b.shape[1]).index_copy(1, torch.arange(0, 2 * b.shape[1], 2),
                                                                          b)[:, ::2],
}


@pytest.mark.parametrize('M, K, N', [(14, 8, 8), (14, 13, 20), (100, 3, 29), (200, 2, 8)])
def test_each_output_is_one_fma_chain_in_every_layout_tile_and_panel(M, K, N):
    """12 x 8 and 6 x 16 tiles, partial ones, K and N off multiples of 8, more rows than a panel."""
    a, b = random(M, K, seed=M), random(K, N, seed=N) * 1e3
    want = reference(a.numpy(), b.numpy())
    for layout in LAYOUTS.values():
        assert np.array_equal(matmul.product(a, layout(b)).numpy(), want)


EPILOGUES = {  # those with a path of their own (plain, bias, scale, scale and causal) and the general one
    'plain': {}, 'bias': dict(bias=True), 'scale': dict(scale=0.3), 'scores': dict(scale=0.3, causal=True),
    'scale and bias': dict(scale=0.3, bias=True), 'causal': dict(causal=True),
    'bias and causal': dict(bias=True, causal=True), 'mask': dict(scale=0.3, mask=True),
}


@pytest.mark.parametrize('M, K, N', [(23, 9, 29), (100, 2, 100)])
def test_every_epilogue_scales_adds_and_hides_as_defined(M, K, N):
    a, b = random(M, K, seed=1), random(K, N, seed=2) * 1e3
    chain = reference(a.numpy(), b.numpy())
    for name, options in EPILOGUES.items():
        scale, causal = options.get('scale'), options.get('causal', False)
        bias = random(N, seed=3) if options.get('bias') else None
        mask = random(M, N, seed=4) > 0 if options.get('mask') else None
        want = chain * np.float32(scale) if scale is not None else chain.copy()
        if bias is not None:
            want = want + bias.numpy()
        if causal:
            want[np.triu(np.ones((M, N), dtype=bool), 1)] = -np.inf
        if mask is not None:
            want[~mask.numpy()] = -np.inf
        for layout in LAYOUTS.values():
            got = matmul.product(a, layout(b), scale=scale, bias=bias, causal=causal, mask=mask)
            assert np.array_equal(got.numpy(), want), name


def test_linear_and_attention_and_their_gradients_are_the_kernels_products_bit_for_bit():
    matmul.load()
    x, w, bias = random(3, 50, 32, seed=3), random(96, 32, seed=4), random(96, seed=5)
    y = torch.ops.agentrl.linear(*(t.requires_grad_() for t in (x, w, bias)))
    g = random(3, 50, 96, seed=6)
    dx, dw, db = torch.autograd.grad(y, (x, w, bias), g)
    x, w, bias, g = x.detach().view(150, 32), w.detach(), bias.detach(), g.view(150, 96)
    assert torch.equal(y, matmul.product(x, w.t(), bias=bias).view(3, 50, 96))
    assert torch.equal(dx, matmul.product(g, w).view(3, 50, 32))
    assert torch.equal(dw, matmul.product(g.t(), x))
    assert torch.equal(db, matmul.product(torch.ones(1, 150), g).view(96))
    q, k, v = (random(3, 4, 29, 8, seed=s) for s in (7, 8, 9))
    mask = random(3, 1, 29, 29, seed=10) > -0.5
    mask[..., 0] = True
    scale = float(np.float32(1 / np.sqrt(8)))  # 1 / sqrt(D) in float32
    for causal, m in ((True, None), (False, mask)):
        y = torch.ops.agentrl.attention(*(t.requires_grad_() for t in (q, k, v)), causal, m)
        g = random(3, 4, 29, 8, seed=11)
        dq, dk, dv = torch.autograd.grad(y, (q, k, v), g)
        q, k, v = q.detach(), k.detach(), v.detach()
        p = torch.softmax(matmul.product(q, k.transpose(-1, -2), scale=scale, causal=causal, mask=m), -1)  # ATen's
        assert torch.equal(y, matmul.product(p, v))
        ds = torch.ops.aten._softmax_backward_data(matmul.product(g, v.transpose(-1, -2)), p, -1, torch.float32)
        assert torch.equal(dq, matmul.product(ds, k, scale=scale))
        assert torch.equal(dk, matmul.product(ds.transpose(-1, -2), q, scale=scale))
        assert torch.equal(dv, matmul.product(p.transpose(-1, -2), g))


def test_the_bits_are_those_of_every_layout_batch_and_call():
    a, b = random(2, 3, 29, 8), random(2, 3, 8, 29, seed=1)
    want = matmul.product(a, b)
    assert torch.equal(want, matmul.product(a.transpose(-1, -2).contiguous().transpose(-1, -2),
                                            b.transpose(-1, -2).contiguous().transpose(-1, -2)))
    assert all(torch.equal(want[i, j], matmul.product(a[i, j], b[i, j])) for i in range(2) for j in range(3))
    assert torch.equal(matmul.product(a, b[:1, :1]), matmul.product(a, b[:1, :1].expand(2, 3, 8, 29).contiguous()))
    for threads in (1, 2):
        torch.set_num_threads(threads)
        assert torch.equal(want, matmul.product(a, b))
    torch.set_num_threads(1)


def test_causal_and_masked_scores_are_minus_infinity_where_hidden():
    q, k = random(2, 11, 8), random(2, 11, 8, seed=1)
    full = matmul.product(q, k.transpose(-1, -2))
    causal = matmul.product(q, k.transpose(-1, -2), causal=True)
    hidden = torch.ones(11, 11, dtype=torch.bool).triu(1)
    assert torch.equal(causal[:, ~hidden], full[:, ~hidden]) and bool((causal[:, hidden] == -torch.inf).all())
    mask = random(2, 11, 11, seed=2) > 0
    masked = matmul.product(q, k.transpose(-1, -2), mask=mask)
    assert torch.equal(masked[mask], full[mask]) and bool((masked[~mask] == -torch.inf).all())


def test_linear_and_attention_agree_with_torch_to_float_rounding_and_give_its_gradients():
    x, w, bias = random(50, 32, seed=3).requires_grad_(), random(96, 32, seed=4).requires_grad_(), random(96, seed=5)
    bias.requires_grad_()
    matmul.load()
    ours, theirs = torch.ops.agentrl.linear(x, w, bias), F.linear(x, w, bias)
    g = random(50, 96, seed=6)
    for mine, torchs in zip((ours, *torch.autograd.grad(ours, (x, w, bias), g)),
                            (theirs, *torch.autograd.grad(theirs, (x, w, bias), g))):
        torch.testing.assert_close(mine, torchs, rtol=1e-5, atol=1e-5)
    q, k, v = (random(3, 4, 29, 8, seed=s).requires_grad_() for s in (7, 8, 9))
    mask = random(3, 1, 29, 29, seed=10) > -0.5
    mask[..., 0] = True
    for options in (dict(causal=True), dict(mask=mask)):
        ours = torch.ops.agentrl.attention(q, k, v, options.get('causal', False), options.get('mask'))
        theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=options.get('mask'),
                                                is_causal=options.get('causal', False))
        g = random(3, 4, 29, 8, seed=11)
        for mine, torchs in zip((ours, *torch.autograd.grad(ours, (q, k, v), g)),
                                (theirs, *torch.autograd.grad(theirs, (q, k, v), g))):
            torch.testing.assert_close(mine, torchs, rtol=1e-5, atol=1e-5)


def test_the_default_version_runs_the_kernel_and_the_previous_one_is_asked_for_by_name():
    code = 'import agentrl.agent.matmul as m, agentrl.numerics as n; print(m.FIXED_ORDER, n.NUMERICS_VERSION)'
    run = lambda env: subprocess.run([sys.executable, '-c', code], check=True, capture_output=True, text=True,
                                     env=env).stdout.split()
    base = {k: v for k, v in os.environ.items() if k != numerics.VERSION_VARIABLE}
    assert run(base) == ['True', '5']
    assert run({**base, numerics.VERSION_VARIABLE: '4'}) == ['False', '4']
    with pytest.raises(ValueError, match='AGENTRL_NUMERICS_VERSION=.6.: expected 5'):
        numerics.version_asked({numerics.VERSION_VARIABLE: '6'}, default=5)

"""The benchmark's accounting: which operator is which kind, and where a function's time goes."""
import torch

from agentrl.numerics.bench import counted_flops, op_kind, seconds_by_kind


def test_operators_are_sorted_into_their_kinds():
    assert op_kind('aten::_scaled_dot_product_flash_attention_for_cpu_backward') == 'attention'
    assert [op_kind(name) for name in ('aten::mm', 'aten::addmm', 'aten::bmm')] == ['matmul'] * 3
    assert op_kind('aten::_foreach_mul_') == op_kind('Optimizer.step#Adam.step') == 'optimizer'
    assert [op_kind(name) for name in ('aten::gelu', 'aten::mul', 'aten::addmm_')] == ['other'] * 3


def test_a_matmul_is_all_matmul_time_and_counted_flops():
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    seconds = seconds_by_kind(lambda: [a @ b for _ in range(20)])
    assert set(seconds) == {'attention', 'matmul', 'optimizer', 'other'}
    assert seconds['attention'] == seconds['optimizer'] == 0
    assert seconds['matmul'] > 4 * seconds['other']
    assert counted_flops(lambda: a @ b) == 2 * 256 ** 3

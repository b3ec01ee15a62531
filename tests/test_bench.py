"""The benchmark's accounting: which operator is which kind, and where a function's time goes."""
import re

import torch

from agentrl.agent.matmul import Linear
from agentrl.numerics.bench import counted_flops, op_kind, seconds_by_kind, seeds_per_process, step_breakdown


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


def test_the_kernels_operators_are_sorted_into_their_kinds():
    """Numerics version 5's products run agentrl's kernel (agentrl/agent/matmul.cpp): its operators, not aten's."""
    linear_backward = 'torch::autograd::CppNode<(anonymous namespace)::Linear>'
    attention_backward = 'torch::autograd::CppNode<(anonymous namespace)::Attention>'
    assert [op_kind(name) for name in ('agentrl::linear', 'agentrl::product', linear_backward)] == ['matmul'] * 3
    assert [op_kind(name) for name in ('agentrl::attention', attention_backward, 'aten::_softmax')] == ['attention'] * 3
    assert op_kind('aten::_log_softmax') == 'other'


def test_a_step_of_a_linear_layer_is_counted_and_broken_down_into_matmul_time(capsys):
    layer, x = Linear(64, 32), torch.randn(128, 64, requires_grad=True)

    def step():
        layer(x).sum().backward()
    flops = counted_flops(step)
    assert flops == 3 * 2 * 128 * 64 * 32  # the product, and the gradients of x and of the weight
    step_breakdown(step, flops, 1e10, 5)
    kinds, why = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r'trainer step, its time by kind of operator \(profiled\): attention 0% \| matmul [1-9]\d*% \| '
                        r'optimizer 0% \| other \d+%', kinds)
    assert re.fullmatch(r'trainer step, why the ratio: its matmuls run at \d+\.\d\d of the peak and take \d+% of its '
                        r'time; were attention free, the ratio would be \d+\.\d{3}', why)


def test_a_step_without_a_matmul_is_broken_down_without_dividing_by_its_time(capsys):
    x = torch.randn(64, requires_grad=True)
    step_breakdown(lambda: x.exp().sum().backward(), 0, 1e10, 2)
    assert capsys.readouterr().out.splitlines()[-1] == (
        'trainer step, why the ratio: the profiler saw no matmul outside attention (MATMULS names them)')


def test_seeds_per_process_times_each_k_against_the_first(base, tok, capsys):
    seeds_per_process(base, tok, 'tinyagent', [1, 2], repeats=1, seeds=2)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith('seeds per process')]
    assert len(lines) == 2 and '1.00x K = 1' in lines[0]
    assert all(re.search(r'ms CPU a seed-step \| [\d.]+x K = 1 \| peak memory \d+ MiB \| profiled', line)
               for line in lines)

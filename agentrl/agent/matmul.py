"""The model's matrix products: agentrl's own kernel in a fixed order (matmul.cpp) from numerics version 5, or torch's
(MKL, oneDNN) where a process asks for version 4 (AGENTRL_NUMERICS_VERSION=4, agentrl/numerics/__init__.py).

The kernel sums each output as one chain of fused multiply-adds over the summed dimension in order, from +0: no
blocking of that dimension by cache size, no dispatch by vendor or model, no fast-math, so its bits depend on the
operands alone on any x86-64 CPU with AVX2 and FMA. It is built at first use with the C++ compiler (CXX, else g++)
against this torch's headers into the agentrl cache folder, under a key of its source, flags, compiler and torch, and
loaded as torch operators (torch.ops.agentrl).
`linear` and `attention` are the model's two products (`segmented_linear`: K linear layers, each on its own rows,
for models scored together): from version 5, a linear layer's forward and both gradients, and attention's scores,
weighted values and their gradients all run on the kernel (softmax and its gradient stay ATen's, pinned at AVX2 as
every other elementwise kernel).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..files import default_cache_dir
from ..numerics import FIXED_ORDER_VERSION, NUMERICS_VERSION, this_cpu

SOURCE = Path(__file__).with_name('matmul.cpp')
FLAGS = ('-O2', '-mavx2', '-mfma', '-ffp-contract=off', '-fno-fast-math', '-fPIC', '-shared', '-std=c++17', '-w')
FIXED_ORDER = NUMERICS_VERSION >= FIXED_ORDER_VERSION  # this process's products: the kernel's (True) or torch's
_loaded = False


def compiler() -> tuple[str, str]:
    """The C++ compiler (CXX, else g++) and its version line."""
    name = os.environ.get('CXX', 'g++')
    done = subprocess.run([name, '--version'], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f'numerics version {FIXED_ORDER_VERSION} builds its kernel with a C++ compiler: {name} failed')
    return name, done.stdout.splitlines()[0]


def build_command(name: str, out: str) -> list[str]:
    """The compiler's command line: the kernel as a library of torch operators, against this torch."""
    root = Path(torch.__file__).parent
    return [name, *FLAGS, f'-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}',
            f'-I{root / "include"}', '-o', out, str(SOURCE), f'-L{root / "lib"}', '-lc10', '-ltorch_cpu',
            f'-Wl,-rpath,{root / "lib"}']


def load() -> None:
    """torch.ops.agentrl: the kernel, built once into the cache folder (atomically: parallel jobs may build it at
    once; about 30 s) and loaded. Its key is the source's text, not its path: every checkout of it shares one build."""
    global _loaded
    if _loaded:
        return
    missing = {'avx2', 'fma'} - this_cpu().flags
    if missing:
        raise RuntimeError(f'the fixed-order kernel needs AVX2 and FMA; this CPU lacks {", ".join(sorted(missing))}')
    name, version = compiler()
    command = [SOURCE.name if part == str(SOURCE) else part for part in build_command(name, '')]  # any checkout's
    key = hashlib.sha256('\n'.join([SOURCE.read_text(), *command, version, torch.__version__]).encode())
    path = default_cache_dir() / 'kernels' / f'matmul-{key.hexdigest()[:20]}.so'
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.tmp-')
        os.close(fd)
        try:
            done = subprocess.run(build_command(name, temporary), capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f'building {SOURCE.name} failed:\n{done.stderr[-3000:]}')
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
    torch.ops.load_library(str(path))
    _loaded = True


def product(a: torch.Tensor, b: torch.Tensor, *, scale: float | None = None, bias: torch.Tensor | None = None,
            causal: bool = False, mask: torch.Tensor | None = None) -> torch.Tensor:
    """a [..., M, K] @ b [..., K, N] -> [..., M, N], each output one fma chain over k in order from +0, then
    * scale (rounded to float32), + bias [N]; -inf where causal hides it (n > m) or mask [..., M, N] is False. At most
    two batch dimensions, broadcast; any strides; float32 on the CPU; no autograd (linear and attention give
    gradients)."""
    load()
    return torch.ops.agentrl.product(a, b, scale, bias, causal, mask)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """F.linear at version 4; the kernel's at version 5, its gradients (dx = dy W, dW = dy^T x, db = 1 dy: sums over
    the rows in order) on the kernel too, in C++ (matmul.cpp's Linear)."""
    if not FIXED_ORDER:
        return F.linear(x, weight, bias)
    load()
    return torch.ops.agentrl.linear(x, weight, bias)


def segmented_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                     offsets: list[int]) -> torch.Tensor:
    """K linear layers of one shape, layer k on rows offsets[k]:offsets[k + 1] of x [N, I]: weight [K, O, I], bias
    [K, O] or None -> [N, O]; each layer's product and gradients are linear's on its rows alone (matmul.cpp's
    Segmented)."""
    if not FIXED_ORDER:
        return torch.cat([F.linear(x[start:stop], weight[k], None if bias is None else bias[k])
                          for k, (start, stop) in enumerate(zip(offsets, offsets[1:]))])
    load()
    return torch.ops.agentrl.segmented(x, weight, bias, offsets)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              mask: torch.Tensor | None = None) -> torch.Tensor:
    """F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal) at version 4; the kernel's at
    version 5 (mask: boolean, True where a query may attend), its gradients in C++ (matmul.cpp's Attention)."""
    if not FIXED_ORDER:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    load()
    return torch.ops.agentrl.attention(q, k, v, causal, mask)


class Linear(nn.Linear):
    """nn.Linear whose product is this numerics version's (linear)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)

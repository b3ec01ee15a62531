"""The vendor audit (agentrl/numerics/audit.py): which listing lines it arms, that it catches PyTorch's default Adam
taking MKL's rsqrtps-based square root (version 3's cause), and that agentrl's Adam and the golden run execute no
instruction whose result depends on the CPU's vendor. The last two need gdb, objdump and grep, and scan every library
once (minutes)."""
import shutil
import subprocess
import sys

import pytest

from agentrl.numerics.audit import vendor_dependent
from agentrl.numerics.golden import golden_command

LISTING = '''
  b498f20:\trsqrtps %xmm8,%xmm4
  b498f24:\tmulps  %xmm4,%xmm8
  912befb:\tvrcp14ps %zmm4,%zmm2
  3a0:\tvrsqrtps %ymm1,%ymm2
  3b0:\tfsin
  3c0:\tvsqrtps %ymm1,%ymm2
  3d0:\trcpss  %xmm1,%xmm0
'''
TOOLS = pytest.mark.skipif(not all(map(shutil.which, ('gdb', 'objdump', 'grep'))), reason='needs gdb, objdump and grep')


def test_the_approximate_and_x87_instructions_are_armed_and_the_exact_ones_not():
    assert vendor_dependent(LISTING) == [(0xb498f20, 'rsqrtps %xmm8,%xmm4'), (0x3a0, 'vrsqrtps %ymm1,%ymm2'),
                                         (0x3b0, 'fsin'), (0x3d0, 'rcpss %xmm1,%xmm0')]


def audit(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, '-m', 'agentrl.numerics.audit', '--', *command], capture_output=True,
                          text=True)


ADAM_STEP = ('import agentrl, torch; from agentrl.learning.losses import adam; p = torch.nn.Parameter(torch.rand(1000)); '
             'o = {}; p.grad = torch.rand(1000); o.step()')


@TOOLS
def test_pytorchs_default_adam_takes_mkls_vendor_dependent_sqrt_and_agentrls_adam_does_not():
    default = audit(sys.executable, '-c', ADAM_STEP.format('torch.optim.Adam([p])'))
    assert default.returncode == 1, default.stdout + default.stderr
    assert 'rsqrtps' in default.stdout and 'mkl_vml_kernel_sSqrt' in default.stdout
    fused = audit(sys.executable, '-c', ADAM_STEP.format('adam([p], 1e-3)'))
    assert fused.returncode == 0 and 'executed: 0' in fused.stdout, fused.stdout + fused.stderr


@TOOLS
def test_the_golden_run_executes_no_vendor_dependent_instruction(tmp_path):
    command, run = golden_command(tmp_path)
    done = audit(*command)
    assert done.returncode == 0 and 'executed: 0' in done.stdout, done.stdout + done.stderr
    assert (run / 'run.json').is_file()

"""Same numbers on any x86-64 machine with AVX2: the numeric libraries' code paths, fixed before torch loads.

Which kernels PyTorch (ATen), MKL and oneDNN run depends on the CPU unless each library is told: on a
CPU with AVX-512 all three take wider code paths than on one without, and each path rounds differently.
Measured on one machine (AVX-512), a batch's log-probs and three Adam steps change bits with each
control alone: ATEN_CPU_CAPABILITY (avx512 / avx2 / default), MKL_CBWR (unset / AVX2 / COMPATIBLE) and
ONEDNN_MAX_CPU_ISA (unset / AVX2 / SSE41). SETTINGS pins all three at AVX2, the widest level common to
x86-64 machines, and one thread. The libraries read them lazily, at their first kernel, so `apply()`
runs when agentrl is imported (after torch is fine, before its first computation is not); `require()`
refuses to compute where they are not in force.

NUMERICS_VERSION names what a run's numbers depend on besides its configuration and seed: this code's
arithmetic and these settings. Bump it whenever a change moves any run's numbers, even at float
rounding; a run made under another version is never reused.

Pure Python: imports neither torch nor pandas, so the workflow and the analysis can read it cheaply.
"""
from __future__ import annotations

import os
import platform

NUMERICS_VERSION = 2
UNSTATED_VERSION = 1  # the version of a published run whose records state none (made before versions)

SETTINGS = {
    'ATEN_CPU_CAPABILITY': 'avx2',  # ATen's vectorised kernels: AVX2, not AVX-512
    'MKL_CBWR': 'AVX2,STRICT',  # MKL's conditional numerical reproducibility: the AVX2 branch, strict mode
    'ONEDNN_MAX_CPU_ISA': 'AVX2',  # oneDNN's kernels: at most AVX2
    'OMP_NUM_THREADS': '1',  # one thread: no reduction split across threads
    'MKL_NUM_THREADS': '1',
}
DISPATCH = 'AVX2'  # what torch.backends.cpu.get_cpu_capability() reports under SETTINGS
_MKL_BRANCH = 0x1000A  # mkl_serv_cbwr_get(MKL_CBWR_ALL) under MKL_CBWR=AVX2,STRICT (MKL_CBWR_AVX2 | STRICT)
PROVENANCE_KEYS = ('numerics_version', 'cpu', 'cpu_capability', 'numeric_settings', 'guarantee')


class NumericsError(RuntimeError):
    """The process computes under code paths other than SETTINGS: its numbers would depend on the CPU."""


def apply() -> None:
    """Put SETTINGS in this process's environment (and its children's), over whatever the caller set."""
    os.environ.update(SETTINGS)


def cpuinfo(field: str) -> str | None:
    """The value of a field of /proc/cpuinfo's first processor ('model name', 'flags'); None where there is none."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.split(':', 1)[0].strip() == field:
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux), else what the platform module says."""
    return cpuinfo('model name') or platform.processor() or platform.machine()


def cpu_has_avx2() -> bool:
    """Whether the CPU announces AVX2 (the flags of /proc/cpuinfo; False where there are none to read)."""
    return 'avx2' in (cpuinfo('flags') or '').split()


def outside_guarantee() -> str | None:
    """Why this machine is outside the same-numbers guarantee (not x86-64, or no AVX2), or None."""
    if platform.machine().lower() not in ('x86_64', 'amd64'):
        return f'architecture {platform.machine()} is not x86-64: its numbers may differ from an x86-64 machine\'s'
    if not cpu_has_avx2():
        return 'this CPU does not announce AVX2: its numbers may differ from an AVX2 machine\'s'
    return None


def _mkl_branch() -> int | None:
    """MKL's conditional-numerical-reproducibility branch in force, or None where torch has no MKL."""
    import ctypes
    import torch
    if not torch.backends.mkl.is_available():
        return None
    library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))
    return library.mkl_serv_cbwr_get(-1)  # MKL_CBWR_ALL: the branch and the strict flag


def problems() -> list[str]:
    """What differs from SETTINGS in this process, each saying what to set; empty when all is in force."""
    import torch
    found = [f'{name}={os.environ.get(name)!r}, expected {value!r}' for name, value in SETTINGS.items()
             if os.environ.get(name) != value]
    if torch.get_num_threads() != 1:
        found.append(f'torch uses {torch.get_num_threads()} threads, expected 1 (torch.set_num_threads(1))')
    if outside_guarantee() is None and not found:  # asking a library first makes it read the environment
        if torch.backends.cpu.get_cpu_capability() != DISPATCH:
            found.append(f'torch dispatches to {torch.backends.cpu.get_cpu_capability()}, expected {DISPATCH} '
                         '(a torch computation ran before agentrl set ATEN_CPU_CAPABILITY)')
        branch = _mkl_branch()
        if branch is not None and branch != _MKL_BRANCH:
            found.append(f'MKL runs branch {branch:#x}, expected {_MKL_BRANCH:#x} '
                         '(an MKL call ran before agentrl set MKL_CBWR)')
    return found


def require() -> None:
    """Refuse to compute where SETTINGS are not in force (NumericsError saying what to set)."""
    found = problems()
    if found:
        settings = ' '.join(f'{name}={value}' for name, value in SETTINGS.items())
        raise NumericsError('agentrl: the numeric settings are not in force, so this run would depend on the CPU: '
                            + '; '.join(found) + f'. Start the process with {settings} in its environment, '
                            'or import agentrl before any torch computation.')


def provenance() -> dict:
    """What a run's numbers were made under: the numerics version, CPU, torch's dispatch, the settings."""
    import torch
    return dict(numerics_version=NUMERICS_VERSION, cpu=cpu_model(),
                cpu_capability=torch.backends.cpu.get_cpu_capability(),
                numeric_settings={name: os.environ.get(name) for name in SETTINGS},
                guarantee=outside_guarantee() or 'same numbers on any x86-64 machine with AVX2')

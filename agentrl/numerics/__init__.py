"""Same numbers on any x86-64 CPU with AVX2: the numeric libraries' code paths, fixed before torch loads.

Which kernels PyTorch (ATen), MKL and oneDNN run depends on the CPU unless each library is told: on a CPU with
AVX-512 all three take wider code paths than on one without, and each path rounds differently. Measured, a batch's
log-probs and three Adam steps change bits with each control alone: ATEN_CPU_CAPABILITY (avx512 / avx2 / default),
MKL_CBWR (unset / AVX2 / COMPATIBLE) and ONEDNN_MAX_CPU_ISA (unset / AVX2 / SSE41). SETTINGS pins ATen and oneDNN at
AVX2, the widest level common to x86-64 CPUs, MKL at its COMPATIBLE branch, and one thread. MKL honours its
instruction-set branches (AVX2, AVX512, ...) on Intel CPUs only and silently runs its AUTO branch elsewhere;
COMPATIBLE (SSE2 without the approximate rcpps/rsqrtps, whose results differ between vendors) is the branch it
honours on every x86-64 CPU. The libraries read the controls lazily, at their first kernel, so `apply()` runs when
agentrl and torch are both imported, whichever comes first (torch before agentrl is fine, a torch computation before
agentrl is not); a process that imports agentrl's pure modules without torch keeps its environment.

`check()` judges a process: a caller at fault (other settings, more threads, a torch computation before agentrl set
the controls) is refused by `require()`; a CPU on which a library does not put a setting in force (no AVX2, not
x86-64, MKL refusing the branch) runs, and its runs say why they are outside the guarantee (`provenance()`).

NUMERICS_VERSION names what a run's numbers depend on besides its configuration and seed: this code's arithmetic and
these settings. Bump it whenever a change moves any run's numbers, even at float rounding; a run made under another
version is never reused. Version 3: MKL's COMPATIBLE branch (version 2 ran its AVX2 branch, Intel CPUs only).
Version 4: the base agent's pretraining uses agentrl's fused Adam (agentrl/learning/losses.py) like every other update.
Version 5: every matrix product (linear layers, attention) in agentrl/agent/matmul.cpp's fixed order instead of MKL's
and oneDNN's, whose blocking and dispatch follow the CPU (and whose vendor-neutral branch is their slowest).

The vendor mattered under version 3, measured: AMD CPUs of three microarchitectures (Zen 3, 4 and 5) gave the same
numbers, an Intel CPU (family 6, model 167) others. The cause, found by breaking on every instruction whose result the
vendor decides (rcpps, rsqrtps and their kin, x87 transcendentals) in every library a run loads: the pretraining's
single-tensor Adam took its square root through MKL's vector math, whose float sqrt refines rsqrtps and ends an ulp
off on a vendor-dependent sixth of inputs. Under version 4 no such instruction executes in a run
(results/measurements.md, "The audit"), so the guarantee is every vendor's CPUs; measured: an Intel Xeon (family 6,
model 167) and an AMD EPYC (family 25, model 17) give the golden run the same digest.

Pure Python: imports neither torch nor pandas, so the workflow and the analysis can read it cheaply.
"""
from __future__ import annotations

import importlib.abc
import os
import platform
import sys
from collections.abc import Mapping
from dataclasses import dataclass

NUMERICS_VERSION = 5
UNSTATED_VERSION = 1  # the version of a published run whose records state none (made before versions)
FIXED_ORDER_VERSION = 5  # from this version on, matrix products run agentrl/agent/matmul.cpp's fixed-order kernel
PREVIOUS_VERSION = 4  # the version before, which a process may still ask for (to compare)
VERSION_VARIABLE = 'AGENTRL_NUMERICS_VERSION'  # '4': this process and its children run the previous version

SETTINGS = {
    'ATEN_CPU_CAPABILITY': 'avx2',  # ATen's vectorised kernels: AVX2, not AVX-512
    'MKL_CBWR': 'COMPATIBLE,STRICT',  # MKL's conditional numerical reproducibility: the vendor-neutral branch, strict
    'ONEDNN_MAX_CPU_ISA': 'AVX2',  # oneDNN's kernels: at most AVX2
    'OMP_NUM_THREADS': '1',  # one thread: no reduction split across threads
    'MKL_NUM_THREADS': '1',
}
DISPATCH = 'AVX2'  # what torch.backends.cpu.get_cpu_capability() reports under SETTINGS
MKL_BRANCHES = {'OFF': 0x1, 'AUTO': 0x2, 'COMPATIBLE': 0x3, 'SSE2': 0x4, 'AVX2': 0xA, 'AVX512': 0xC}  # mkl_service.h
MKL_STRICT = 0x10000
GUARANTEE = 'same numbers on any x86-64 CPU with AVX2'
VERSIONS = {  # where the runs of each numerics version rerun bit for bit
    1: 'made before the numeric settings were pinned: the same bits on the machine that made them only',
    2: "the same bits on Intel x86-64 CPUs with AVX2 only (MKL's AVX2 branch, which MKL runs on Intel CPUs only)",
    3: 'the same bits on x86-64 CPUs with AVX2 of the vendor that made the run (measured: AMD\'s Zen 3, 4 and 5 agree, '
       "an Intel CPU gives other bits: the pretraining's Adam took MKL's vendor-dependent square root)",
    PREVIOUS_VERSION: f'{GUARANTEE}: no instruction whose result depends on the vendor executes (audited on Intel; '
                      'measured on Intel and AMD)',
    NUMERICS_VERSION: f"{GUARANTEE}: version 4 with every matrix product in agentrl/agent/matmul.cpp's fixed order "
                      '(audited and measured on AMD; untested on Intel)',
}


def version_asked(environment: Mapping[str, str], default: int = NUMERICS_VERSION) -> int:
    """The numerics version a process runs: the default, or the previous one where VERSION_VARIABLE names it."""
    asked = environment.get(VERSION_VARIABLE, '')
    if asked not in ('', str(default), str(PREVIOUS_VERSION)):
        raise ValueError(f'{VERSION_VARIABLE}={asked!r}: expected {default} (the default) or {PREVIOUS_VERSION} '
                         '(the previous version, to compare), or unset')
    return int(asked or default)


NUMERICS_VERSION = version_asked(os.environ)  # the default above, unless VERSION_VARIABLE asks for the previous one
PROVENANCE_KEYS = ('numerics_version', 'cpu', 'cpu_capability', 'numeric_settings', 'guarantee')  # a run states them
TIMING = frozenset({'wall_s', 'sample_s', 'cpu_s'})  # a run's time fields, columns and metrics: not its numbers


class NumericsError(RuntimeError):
    """The caller defeated SETTINGS (other values, more threads, a computation first): the numbers would differ."""


@dataclass(frozen=True)
class Cpu:
    """What the guarantee depends on about a CPU: architecture, model and vendor names, instruction-set flags."""
    machine: str
    model: str
    vendor: str
    flags: frozenset[str]

    def outside(self) -> str | None:
        """Why no library can hold the guarantee on this CPU (not x86-64, or no AVX2), or None."""
        if self.machine.lower() not in ('x86_64', 'amd64'):
            return f'architecture {self.machine} is not x86-64: its numbers may differ from an x86-64 CPU\'s'
        if 'avx2' not in self.flags:
            return f'this CPU ({self.model}, {self.vendor}) does not announce AVX2: its numbers may differ'
        return None


@dataclass(frozen=True)
class Check:
    """A process judged against SETTINGS: the caller's faults (refused) and why it is outside the guarantee (runs)."""
    faults: tuple[str, ...]
    outside: str | None


def apply() -> None:
    """Put SETTINGS in this process's environment (and its children's), over whatever the caller set."""
    os.environ.update(SETTINGS)


class _BeforeTorch(importlib.abc.MetaPathFinder):
    """Applies SETTINGS when torch is first imported, before its code (and the OpenMP runtime it loads) runs."""

    def find_spec(self, name, path=None, target=None):
        if name == 'torch':
            sys.meta_path.remove(self)
            apply()
        return None  # the import goes on as usual


def apply_before_torch() -> None:
    """apply() now if torch is already imported (before its first computation is fine), else when it is imported:
    a process that never loads torch (the analysis, the workflow) keeps its environment as it was."""
    if 'torch' in sys.modules:
        apply()
    elif not any(isinstance(finder, _BeforeTorch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _BeforeTorch())


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


def this_cpu() -> Cpu:
    """This machine's CPU (/proc/cpuinfo on Linux; elsewhere what the platform module says, without flags). Its model
    names the family, model and stepping where /proc/cpuinfo gives them ('AMD EPYC (family 25, model 1, stepping
    1)'): a virtual machine's model name alone ('AMD EPYC') does not tell two CPU generations apart."""
    name = cpuinfo('model name') or platform.processor() or platform.machine()
    numbers = [(label, cpuinfo(field)) for label, field in (('family', 'cpu family'), ('model', 'model'),
                                                              ('stepping', 'stepping'))]
    if all(value for _, value in numbers):
        name += ' (' + ', '.join(f'{label} {value}' for label, value in numbers) + ')'
    return Cpu(machine=platform.machine(), model=name, vendor=cpuinfo('vendor_id') or 'unknown vendor',
               flags=frozenset((cpuinfo('flags') or '').split()))


def outside_guarantee() -> str | None:
    """Why this machine is outside the same-numbers guarantee whatever the libraries do (not x86-64, no AVX2)."""
    return this_cpu().outside()


def mkl_branch_code(setting: str) -> int:
    """The code mkl_serv_cbwr_get reports for an MKL_CBWR value: 'COMPATIBLE,STRICT' -> 0x10003."""
    branch, _, strict = setting.partition(',')
    return MKL_BRANCHES[branch] | (MKL_STRICT if strict == 'STRICT' else 0)


def mkl_branch_name(code: int) -> str:
    """An MKL branch code in MKL_CBWR's words: 0x10002 -> 'AUTO,STRICT'."""
    names = {value: name for name, value in MKL_BRANCHES.items()}
    name = names.get(code & ~MKL_STRICT, f'{code & ~MKL_STRICT:#x}')
    return name + (',STRICT' if code & MKL_STRICT else '')


def check(cpu: Cpu, environment: Mapping[str, str], threads: int, dispatch: str | None, mkl_branch: int | None,
          settings: Mapping[str, str] = SETTINGS) -> Check:
    """Judge a process: the controls in its environment, torch's threads, the instruction set torch dispatches to
    and the branch MKL reports (None: no MKL; the libraries are asked only once the environment is right, since
    asking makes them read it)."""
    faults = [f'{name}={environment.get(name)!r}, expected {value!r}' for name, value in settings.items()
              if environment.get(name) != value]
    if threads != 1:
        faults.append(f'torch uses {threads} threads, expected 1 (torch.set_num_threads(1))')
    outside = cpu.outside()
    if outside is not None or faults:
        return Check(tuple(faults), outside)
    if dispatch != DISPATCH:
        faults.append(f'torch dispatches to {dispatch}, expected {DISPATCH} '
                      '(a torch computation ran before agentrl set ATEN_CPU_CAPABILITY)')
    expected = mkl_branch_code(settings['MKL_CBWR'])
    if mkl_branch is not None and mkl_branch != expected:
        if mkl_branch == MKL_BRANCHES['AUTO'] | (expected & MKL_STRICT):  # read our setting, fell back: the CPU
            outside = (f'MKL does not honour MKL_CBWR={settings["MKL_CBWR"]} on this CPU ({cpu.model}, {cpu.vendor}) '
                       'and runs its AUTO branch, whose numbers depend on the CPU')
        else:
            faults.append(f'MKL runs branch {mkl_branch_name(mkl_branch)} ({mkl_branch:#x}), expected '
                          f'{settings["MKL_CBWR"]} ({expected:#x}) (an MKL call ran before agentrl set MKL_CBWR)')
    return Check(tuple(faults), outside)


def _mkl_branch() -> int | None:
    """MKL's conditional-numerical-reproducibility branch in force, or None where torch has no MKL."""
    import ctypes
    import torch
    if not torch.backends.mkl.is_available():
        return None
    library = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), 'lib', 'libtorch_cpu.so'))
    return library.mkl_serv_cbwr_get(-1)  # MKL_CBWR_ALL: the branch and the strict flag


def check_this_process() -> Check:
    """check() of this process: its CPU, environment and threads, and what torch and MKL report."""
    import torch
    cpu, environment = this_cpu(), {name: os.environ.get(name) for name in SETTINGS}
    ask = cpu.outside() is None and all(environment[name] == value for name, value in SETTINGS.items())
    return check(cpu, environment, torch.get_num_threads(),
                 torch.backends.cpu.get_cpu_capability() if ask else None, _mkl_branch() if ask else None)


def problems() -> list[str]:
    """The caller's faults in this process, each saying what differs; empty when the caller is not at fault."""
    return list(check_this_process().faults)


def require() -> None:
    """Refuse to compute where the caller defeated SETTINGS (NumericsError saying what to set). A CPU on which the
    guarantee cannot be held is not refused: its runs say so in their provenance."""
    found = problems()
    if found:
        settings = ' '.join(f'{name}={value}' for name, value in SETTINGS.items())
        raise NumericsError('agentrl: the numeric settings are not in force, so this run would depend on the CPU: '
                            + '; '.join(found) + f'. Start the process with {settings} in its environment, '
                            'or import agentrl before any torch computation.')


def provenance() -> dict:
    """What a run's numbers were made under: the numerics version, CPU, torch's dispatch, the settings, and whether
    the guarantee holds here (else why not)."""
    import torch
    cpu = this_cpu()
    return dict(numerics_version=NUMERICS_VERSION, cpu=cpu.model, cpu_vendor=cpu.vendor,
                cpu_capability=torch.backends.cpu.get_cpu_capability(),
                numeric_settings={name: os.environ.get(name) for name in SETTINGS},
                guarantee=check_this_process().outside or GUARANTEE)

"""The numerics check's decisions without the machines: a faked CPU (vendor, flags) and the branch MKL reports.
The settings hold on Intel and AMD alike (that the two then agree is the audit's: tests/test_audit.py); a CPU on
which they cannot hold runs and is marked, naming the CPU and the refused setting; a caller at fault is refused,
naming what it did. Pure: no torch computation."""
import pytest

from agentrl import numerics
from agentrl.numerics import GUARANTEE, SETTINGS, Cpu, check, mkl_branch_code

INTEL = Cpu('x86_64', 'Intel(R) Xeon(R) Platinum 8480+', 'GenuineIntel', frozenset({'sse4_2', 'avx2', 'avx512f'}))
AMD = Cpu('x86_64', 'AMD EPYC 9654 96-Core Processor', 'AuthenticAMD', frozenset({'sse4_2', 'avx2', 'avx512f'}))
NO_AVX2 = Cpu('x86_64', 'Intel(R) Atom(TM) CPU C2750', 'GenuineIntel', frozenset({'sse4_2'}))
ARM = Cpu('aarch64', 'Neoverse-V2', 'unknown vendor', frozenset({'asimd'}))
COMPATIBLE_STRICT, AUTO_STRICT, AVX2_STRICT = 0x10003, 0x10002, 0x1000A  # what mkl_serv_cbwr_get reports


def judged(cpu, mkl_branch, environment=SETTINGS, threads=1, dispatch='AVX2', settings=SETTINGS):
    return check(cpu, dict(environment), threads, dispatch, mkl_branch, settings)


def test_the_settings_ask_mkl_for_its_vendor_neutral_branch():
    assert SETTINGS['MKL_CBWR'] == 'COMPATIBLE,STRICT' and mkl_branch_code(SETTINGS['MKL_CBWR']) == COMPATIBLE_STRICT
    assert mkl_branch_code('AVX2,STRICT') == AVX2_STRICT and mkl_branch_code('AUTO') == 0x2


@pytest.mark.parametrize('cpu', [INTEL, AMD], ids=['intel', 'amd'])
def test_intel_and_amd_are_inside_the_guarantee(cpu):
    assert judged(cpu, COMPATIBLE_STRICT) == numerics.Check(faults=(), outside=None)


def test_a_cpu_without_avx2_runs_marked_outside_the_guarantee_naming_it():
    found = judged(NO_AVX2, None, dispatch=None)
    assert found.faults == ()
    assert found.outside == ('this CPU (Intel(R) Atom(TM) CPU C2750, GenuineIntel) does not announce AVX2: its numbers '
                             'may differ')
    assert 'not x86-64' in judged(ARM, None, dispatch=None).outside


def test_a_branch_the_cpu_refuses_runs_marked_naming_the_cpu_and_the_setting():
    """Version 2's settings on AMD, as reported: MKL read AVX2,STRICT, kept STRICT and ran AUTO. Not the caller's
    fault: the run goes on, outside the guarantee."""
    found = judged(AMD, AUTO_STRICT, environment={**SETTINGS, 'MKL_CBWR': 'AVX2,STRICT'},
                   settings={**SETTINGS, 'MKL_CBWR': 'AVX2,STRICT'})
    assert found.faults == ()
    assert found.outside == ('MKL does not honour MKL_CBWR=AVX2,STRICT on this CPU (AMD EPYC 9654 96-Core Processor, '
                             'AuthenticAMD) and runs its AUTO branch, whose numbers depend on the CPU')
    assert judged(INTEL, AVX2_STRICT, environment={**SETTINGS, 'MKL_CBWR': 'AVX2,STRICT'},
                  settings={**SETTINGS, 'MKL_CBWR': 'AVX2,STRICT'}) == numerics.Check((), None)


@pytest.mark.parametrize('cpu', [INTEL, AMD], ids=['intel', 'amd'])
def test_a_caller_at_fault_is_refused_naming_what_it_did(cpu):
    environment = {**SETTINGS, 'MKL_CBWR': 'AVX512', 'OMP_NUM_THREADS': '4'}
    assert judged(cpu, None, environment=environment, threads=4, dispatch=None).faults == (
        "MKL_CBWR='AVX512', expected 'COMPATIBLE,STRICT'", "OMP_NUM_THREADS='4', expected '1'",
        'torch uses 4 threads, expected 1 (torch.set_num_threads(1))')
    # the controls right, but torch and MKL had computed before agentrl set them: they run what they read first
    found = judged(cpu, 0x1, dispatch='AVX512')
    assert found.outside is None and found.faults == (
        'torch dispatches to AVX512, expected AVX2 (a torch computation ran before agentrl set ATEN_CPU_CAPABILITY)',
        'MKL runs branch OFF (0x1), expected COMPATIBLE,STRICT (0x10003) (an MKL call ran before agentrl set MKL_CBWR)')
    # AUTO without STRICT was read from the caller's own MKL_CBWR=AUTO, not fallen back to: the caller's fault
    assert judged(cpu, 0x2).faults[0].startswith('MKL runs branch AUTO (0x2)')


def test_this_machine_is_judged_inside_the_guarantee_or_says_why():
    found = numerics.check_this_process()
    assert found.faults == ()
    assert found.outside == numerics.outside_guarantee() or found.outside.startswith('MKL does not honour')

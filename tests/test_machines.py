"""A design is continued only on CPUs of the vendor its runs were made on: under numerics version 3 AMD's and Intel's
numbers differ (results/measurements.md, "Intel is not AMD"), the base agent's first. Pure: fakes the CPU, reads the
published records."""
import pytest

from agentrl.numerics import NUMERICS_VERSION, Cpu, refuse_to_continue
from workflow import machines
from workflow.state import record_rows

INTEL = Cpu('x86_64', 'Intel(R) Xeon(R) Processor (family 6, model 167, stepping 8)', 'GenuineIntel',
            frozenset({'avx2'}))
AMD = Cpu('x86_64', 'AMD EPYC (family 25, model 17, stepping 1)', 'AuthenticAMD', frozenset({'avx2'}))
RECORDS = 'results/substrates/larger/records'  # published, made on AMD CPUs


def test_a_cpu_of_another_vendor_is_refused_naming_both_vendors_and_what_to_do():
    refused = refuse_to_continue({'AuthenticAMD'}, INTEL)
    assert refused is not None
    for words in ('made on AuthenticAMD CPUs', 'this CPU is GenuineIntel', 'family 6, model 167',
                  f'numerics version {NUMERICS_VERSION}', 'base agent', 'another results_dir'):
        assert words in refused


@pytest.mark.parametrize('made_on', [set(), {''}, {'AuthenticAMD'}, {'AuthenticAMD', 'GenuineIntel'}])
def test_a_cpu_of_the_records_vendor_or_of_a_design_without_runs_continues(made_on):
    assert refuse_to_continue(made_on, AMD) is None


def test_only_the_runs_of_this_numerics_version_bind_the_vendor():
    rows = [dict(numerics_version=NUMERICS_VERSION, cpu_vendor='AuthenticAMD'),
            dict(numerics_version=NUMERICS_VERSION - 1, cpu_vendor='GenuineIntel'),
            dict(numerics_version=NUMERICS_VERSION, cpu_vendor=''),  # made before the vendor was recorded
            dict(numerics_version=NUMERICS_VERSION)]
    assert machines.made_on(rows) == {'AuthenticAMD'}


def test_the_published_records_name_their_vendor_and_the_check_refuses_another(monkeypatch, capsys):
    assert machines.made_on(record_rows(RECORDS)) == {'AuthenticAMD'}
    monkeypatch.setattr(machines, 'this_cpu', lambda: INTEL)
    assert machines.main([RECORDS]) == 1
    assert 'this CPU is GenuineIntel' in capsys.readouterr().err
    monkeypatch.setattr(machines, 'this_cpu', lambda: AMD)
    assert machines.main([RECORDS]) == 0
    assert machines.main(['no/such/records']) == 0  # no runs yet: any CPU begins a design

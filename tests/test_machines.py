"""A design is continued only on CPUs of the vendor its runs were made on: under numerics version 3 AMD's and Intel's
numbers differ (results/measurements.md, "Intel is not AMD"), the base agent's first. The rule with a faked CPU; the
workflow with records of a vendor no CPU has."""
from pathlib import Path

import pytest
from test_workflow import REPO, snakemake

from agentrl.numerics import NUMERICS_VERSION, Cpu, refuse_to_continue, this_cpu
from analysis.load import Runs
from analysis.records import load_records, write_records
from workflow.state import made_on, record_rows

INTEL = Cpu('x86_64', 'Intel(R) Xeon(R) Processor (family 6, model 167, stepping 8)', 'GenuineIntel',
            frozenset({'avx2'}))
AMD = Cpu('x86_64', 'AMD EPYC (family 25, model 17, stepping 1)', 'AuthenticAMD', frozenset({'avx2'}))
LARGER = 'results/substrates/larger'  # published, made on AMD CPUs
CONFIG = REPO / 'config' / 'substrates' / 'larger.yaml'


def test_a_cpu_of_another_vendor_is_refused_naming_both_vendors_and_what_to_do():
    refused = refuse_to_continue({'AuthenticAMD'}, INTEL)
    assert refused is not None
    for words in ('made on AuthenticAMD CPUs', 'this CPU is GenuineIntel', 'family 6, model 167',
                  f'numerics version {NUMERICS_VERSION}', 'base agent', 'another results_dir'):
        assert words in refused


@pytest.mark.parametrize('vendors', [set(), {''}, {'AuthenticAMD'}, {'AuthenticAMD', 'GenuineIntel'}])
def test_a_cpu_of_the_records_vendor_or_of_a_design_without_runs_continues(vendors):
    assert refuse_to_continue(vendors, AMD) is None


def test_only_the_runs_of_this_numerics_version_bind_the_vendor():
    rows = [dict(numerics_version=NUMERICS_VERSION, cpu_vendor='AuthenticAMD'),
            dict(numerics_version=NUMERICS_VERSION - 1, cpu_vendor='GenuineIntel'),
            dict(numerics_version=NUMERICS_VERSION, cpu_vendor=''),  # made before the vendor was recorded
            dict(numerics_version=NUMERICS_VERSION)]
    assert made_on(rows, NUMERICS_VERSION) == {'AuthenticAMD'}
    assert made_on(record_rows(REPO / LARGER / 'records'), NUMERICS_VERSION) == {'AuthenticAMD'}


def records_made_on(vendor: str, workdir: Path) -> None:
    """The larger design's published records under workdir, their runs renamed as made on `vendor`'s CPUs."""
    runs = load_records(REPO / LARGER / 'records')
    write_records(Runs(runs.runs.assign(cpu_vendor=vendor), runs.configs, runs.summaries, runs.tables),
                  workdir / LARGER / 'records')


def test_the_workflow_plans_a_foreign_design_but_its_base_agent_job_stops_naming_the_vendors(tmp_path):
    """Records of a vendor no CPU has: a dry run plans the design's runs and warns; the base agent job stops before
    pretraining, naming both vendors, and makes nothing."""
    records_made_on('ElsewhereVendor', tmp_path)
    planned = snakemake(tmp_path, '--dry-run', '--cores', 1, config=CONFIG)
    assert planned.returncode == 0 and 'made on ElsewhereVendor CPUs' in planned.stdout, planned.stdout[-3000:]
    made = snakemake(tmp_path, '--cores', 1, f'{LARGER}/base_agent.pt', config=CONFIG)
    assert made.returncode != 0
    assert 'made on ElsewhereVendor CPUs and this CPU is' in (tmp_path / LARGER / 'logs' / 'base_agent.log').read_text()
    assert not (tmp_path / LARGER / 'base_agent.pt').exists()


def test_on_a_cpu_of_the_records_vendor_the_base_agent_job_pretrains(tmp_path):
    records_made_on(this_cpu().vendor, tmp_path)
    planned = snakemake(tmp_path, '--dry-run', '--cores', 1, f'{LARGER}/base_agent.pt', config=CONFIG)
    assert planned.returncode == 0 and 'made on' not in planned.stdout, planned.stdout[-3000:]
    assert 'Shell command: python -m agentrl base-agent --out results/substrates/larger/base_agent.pt' in planned.stdout

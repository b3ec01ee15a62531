"""The Snakemake workflow catalog's conventions: its usage file matches the workflow, and the rule files are formatted
as snakefmt formats them (the lint: tests/test_workflow.py; the report: its browser test)."""
import re
import subprocess
import sys
from pathlib import Path

import yaml
from test_envs import rule_environments

REPO = Path(__file__).resolve().parents[1]
RULE_FILES = ['Snakefile', 'workflow/rules/']
FORMAT = f'snakefmt {" ".join(RULE_FILES)}'  # the command that formats them (line length: pyproject.toml)


def test_the_rule_files_are_formatted():
    result = subprocess.run([sys.executable, '-m', 'snakefmt', '--check', *RULE_FILES], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, f'`{FORMAT}` would change them:\n{result.stderr[-3000:]}'


def test_the_catalog_usage_file_says_what_the_workflow_does():
    usage = yaml.safe_load((REPO / '.snakemake-workflow-catalog.yml').read_text())['usage']
    assert set(usage) == {'mandatory-flags', 'software-stack-deployment', 'report'}
    assert set(usage['software-stack-deployment']) == {'conda', 'apptainer', 'apptainer+conda'}
    profile = re.fullmatch(r'--profile (\S+)', usage['mandatory-flags']['flags']).group(1)
    assert (REPO / profile / 'config.yaml').exists() and usage['mandatory-flags']['desc']
    environments = rule_environments()  # every job that runs a package has a conda environment
    assert usage['software-stack-deployment']['conda'] is all(env for _, env in environments.values())
    rules = '\n'.join(path.read_text() for path in (REPO / 'workflow' / 'rules').glob('*.smk'))
    assert usage['report'] is ('report(' in rules and (REPO / 'workflow' / 'report' / 'workflow.rst').exists())

# PPO on a tiny language-model agent (Chapter 8), across seeds: the table of contents.
# The design is one file: the one given with --configfile, else config/config.yaml (never the two
# merged); README.md, section "The workflow", has the commands.
import sys

from snakemake.utils import min_version

sys.path.insert(0, workflow.basedir)  # workflow/design.py, importable as workflow.design
from workflow.design import checked
from workflow.plan import DesignError

min_version("9.0")

DEFAULT_DESIGN = "config/config.yaml"


if not workflow.overwrite_configfiles:

    configfile: DEFAULT_DESIGN


DESIGN_FILE = ", ".join(map(str, workflow.overwrite_configfiles)) or DEFAULT_DESIGN
try:  # the design it extends filled in, validated (workflow/design.py)
    config.update(checked(config, DESIGN_FILE))
except DesignError as error:
    sys.exit(str(error))  # a line per fault, as it is (Snakemake would add a WorkflowError's location and traceback)
config.pop("extends", None)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/base.smk"
include: "workflow/rules/critic.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/chapter.smk"
include: "workflow/rules/stages.smk"
include: "workflow/rules/analysis.smk"


# Every run and experiment not read from the published records is a target as well as the aggregation's input,
# and so is the looks' basis file (Snakemake does not regenerate a missing intermediate file whose consumers are up
# to date: a new basis would otherwise leave the looks and the aggregation as they are).
rule all:
    default_target: True
    input:
        final_files,
        BASIS_FILE,
        rules.aggregate.output,
    localrule: True

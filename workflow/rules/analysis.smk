# The aggregation: every run and experiment of the design -> tables, figures, the claims ledger (with its figure
# and one figure per claim), the results index and the run records that rebuild them all (`python -m analysis
# aggregate`). It reads exactly the design's runs (--run-files, and --reuse of the published records): a stale run
# of a cell or seed outside the design is not read; the ledger reads every seed of them. In a staged design it comes
# after the last stage (rules/stages.smk). Its records are the next invocation's state.
# `snakemake records` publishes a design stopped half-way: the records with its runs made so far added.


# The basis of the looks and the aggregation (workflow/state.py): the design, the claims files and the code that
# decides them, the numerics version; its digest in the file's name: a new basis is a missing file, which remakes
# every look and the tables.
rule basis:
    output:
        BASIS_FILE,
    log:
        f"{RESULTS}/logs/configs/basis.log",  # empty: the job writes one small file, in-process
    localrule: True
    run:
        write_basis(output[0], BASIS)


rule aggregate:
    input:
        runs=final_files,
        looks=final_look,
        basis=BASIS_FILE,
    output:
        claims=report(f"{RESULTS}/claims.md", caption="../report/claims.rst", category="Claims"),
        index=report(f"{RESULTS}/README.md", caption="../report/index.rst", category="Claims"),
        tables=report(
            directory(f"{RESULTS}/tables"),
            patterns=["{name}.csv"],
            caption="../report/tables.rst",
            category="Tables",
            labels={"table": "{name}"},
        ),
        figures=report(
            directory(f"{RESULTS}/figures"),
            patterns=["{name}.svg"],
            caption="../report/figures.rst",
            category="Figures",
            labels={"figure": "{name}"},
        ),
        claim_figures=report(
            directory(f"{RESULTS}/claims"),
            patterns=["{claim}.svg"],
            caption="../report/claim.rst",
            category="Claim figures",
            labels={"claim": "{claim}"},
        ),
    log:
        f"{RESULTS}/logs/aggregate.log",
    benchmark:
        f"{RESULTS}/benchmarks/aggregate.tsv"
    conda:
        "../../envs/analysis.yaml"
    threads: 1
    resources:
        runtime=30,
        mem_mb=4000,
    # not an output: RESULTS/records, the state every invocation starts from (Snakemake would delete an output
    # before the job that reads it); the aggregation rewrites it atomically, from the runs it read
    params:
        out=lambda wildcards, output: os.path.dirname(output.claims) or ".",
        runs=lambda wildcards: final_runs()[1],
        baseline=BASELINE,
    shell:
        "OMP_NUM_THREADS=1 python -m analysis aggregate {params.runs}"
        " --out {params.out:q} --baseline {params.baseline:q} > {log:q} 2>&1"


# The records with every run of the design made so far added (its cells and experiments at any seed of its plan, from
# the run directories; a run directory replaces the record of its run); the records' other runs are kept, save those
# of another numerics version (a republish starts its records afresh). No look, no ledger: a design stopped half-way
# is published by it, and the next invocation, on any clone, continues from it.
# Neither input nor output: it runs whenever it is a target, and plans no run.
rule records:
    log:
        f"{RESULTS}/logs/records.log",  # the runs it read and the files it wrote
    localrule: True
    conda:
        "../../envs/analysis.yaml"
    params:
        runs=lambda wildcards: made_runs_option(),
        baseline=BASELINE,
        out=RESULTS,
    shell:
        "OMP_NUM_THREADS=1 python -m analysis records {params.runs} --baseline {params.baseline:q} --out {params.out:q}"
        " > {log:q} 2>&1"

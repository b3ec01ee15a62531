# The aggregation: every run and experiment of the design -> tables, figures, the claims ledger (with its figure
# and one figure per claim), the results index and the run records that rebuild them all (`python -m analysis
# aggregate`). It reads exactly its inputs (--run-files): a stale run of a cell or seed outside the design is not
# read. In a sequential design it comes after the last stage (rules/stages.smk) and replays the design's looks.


rule aggregate:
    input:
        runs=final_runs,
        looks=final_look,
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
        records=directory(f"{RESULTS}/records"),
    params:
        out=lambda wildcards, output: os.path.dirname(output.claims) or ".",
        baseline=BASELINE,
        looks=final_looks,
    log:
        f"{RESULTS}/logs/aggregate.log",
    benchmark:
        f"{RESULTS}/benchmarks/aggregate.tsv"
    threads: 1
    resources:
        runtime=30,
        mem_mb=4000,
    conda:
        "../../envs/analysis.yaml"
    shell:
        "OMP_NUM_THREADS=1 python -m analysis aggregate --run-files {input.runs:q}"
        " --out {params.out:q} --baseline {params.baseline:q} {params.looks} > {log:q} 2>&1"

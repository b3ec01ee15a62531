# PPO's critic, warmed once per seed and shared by every PPO cell of that seed, as the base agent is
# shared by all: the warm-up (agentrl.learning.trainer.warm_critic) reads only the base agent, the seed and the
# critic's constants. REINFORCE has no critic; its runs do not wait for one.


rule critic_config:
    output:
        f"{RESULTS}/critics/config.json",
    log:
        f"{RESULTS}/logs/critics/config.log",  # empty: the job writes one small file, in-process
    localrule: True
    params:
        text=critic_constants(),
    run:
        write_text(output[0], params.text)


rule warm_critic:
    input:
        config=rules.critic_config.output[0],
        base=job_base,
    output:
        f"{RESULTS}/critics/seed~{{seed}}.pt",
    log:
        f"{RESULTS}/logs/critics/seed~{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/critics/seed~{{seed}}.tsv"
    conda:
        "../../envs/agentrl.yaml"
    threads: 1
    # runtime in minutes: the chapter's warm-up takes about 5 s on one thread
    resources:
        runtime=5,
        mem_mb=1500,
    params:
        numerics=NUMERICS_VERSION,  # a new version of the numerics remakes it
        substrate=SUBSTRATE,
    shell:
        "python -m agentrl warm-critic --config {input.config:q} --seed {wildcards.seed}"
        " --out {output:q} --base {input.base:q} --substrate {params.substrate} > {log:q} 2>&1"

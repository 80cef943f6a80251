"""`specbench run SUITE --executor slurm`: one Slurm job per shard, one shared results directory.

shards (split a suite) → resources (each shard's GPU request) → submit (sbatch, and
`--test-only` first) → job (the campaign, restricted to a shard, on a node) → state
(squeue/scontrol/sacct) → status (jobs and cells, read from the results) → executor (submit
what is missing, watch, resubmit failures). sharedfs tells from the mount whether the
results directory's locks hold across hosts.
"""

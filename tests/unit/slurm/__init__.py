"""Unit tests of the Slurm executor: scripts, states, shards, settings, manifest locking."""

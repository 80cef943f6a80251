"""Workloads: the prompts specbench sends, whatever file or hub dataset they came from."""

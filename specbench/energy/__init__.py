"""GPU board energy over each measured window (issue 41).

`reading` holds the types every source returns; `exporter`, `amdsmi_source` and
`nvml_source` the three sources (an exporter URL, amdsmi, NVML; the libraries imported
lazily, through `library`); `sources` which one a setting opens, and the auto choice;
`log` the cell's raw `energy.jsonl`; `sampler` the power sampler that runs
on its own thread beside a window; `window` the pure function from the saved readings to
the cell's `energy` object with its reason codes; `select` which source and which GPUs a
server gets. Board energy is not node energy: CPU, memory, network and cooling are left out.
"""

"""GPU board energy over each measured window (issue 41).

`reading` holds the types every source returns; `sources` the three sources (an exporter
URL, amdsmi, NVML; the libraries imported lazily); `sampler` the power sampler that runs
on its own thread beside a window; `window` the pure function from the saved readings to
the cell's `energy` object with its reason codes; `select` which source and which GPUs a
server gets. Board energy is not node energy: CPU, memory, network and cooling are left out.
"""

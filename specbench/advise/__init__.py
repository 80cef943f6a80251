"""Which configuration to ship: advice read from saved results, never from the network.

Between `analysis` (each point's figures and intervals) and `render`: the K grid and the
pick with its tie rule, the K schedule vLLM runs, the Pareto frontier of throughput against
interactivity, capacity under a latency SLO, and the next cells worth measuring.
"""

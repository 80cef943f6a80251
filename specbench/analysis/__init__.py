"""The analysis layer: results directories → pandas frames → tables, figures, reports.

pandas and matplotlib are imported only here (and inside functions), so the rest of
specbench, and `specbench --help`, never pay for them.
"""

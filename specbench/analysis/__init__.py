"""The analysis layer: results directories → pandas frames → table data (`table.Table`).

pandas is imported only here and in `render` (and inside functions), so the rest of
specbench, and `specbench --help`, never pay for it. Rendering lives in `specbench.render`.
"""

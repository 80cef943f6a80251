"""The render stage: the analysis layer's table data → report.md, figures, report.html.

Renderers print the display rows of `analysis.table.Table` and draw its data frames; none
computes a number. matplotlib is imported only here (and inside functions).
"""

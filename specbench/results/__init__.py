"""Reading results directories back: cells, selections, tidy frames.

Shared by analysis, gate and lossless.
"""

"""One module per upstream source family of SPEED-Bench: each turns a placeholder row into text.

Every module has `resolve(row, ctx) -> list[str]`, the row's resolved turns.
"""

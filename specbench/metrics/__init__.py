"""Pure metric functions: each documents its formula, and whether higher or lower is better."""

"""Thin command-line layer: parse options, call one library function, map errors to exit codes."""

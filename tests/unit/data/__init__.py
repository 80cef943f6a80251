"""Tests of specbench.data: loaders, selection, context fit, inspect."""

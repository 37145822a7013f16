"""Figures drawn from stored results (no method runs): catalog, one module per kind of figure."""

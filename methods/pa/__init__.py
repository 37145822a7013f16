"""PA: prior-annealed sparse networks with asymptotic-normal intervals (Zhang, Sun & Liang, NeurIPS 2023).

See docs/guide/methods.md."""

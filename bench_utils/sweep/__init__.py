"""Run sweeps: every process of every cell in a subprocess of its own, locally or on a Ray cluster; the
studies after them; the time estimate before them. No torch."""

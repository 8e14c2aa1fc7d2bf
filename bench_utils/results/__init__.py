"""Rows and what is computed from them once: results files read and written, the one DataFrame, a cell's
repeats combined and its statistics, comparisons between runs and with the guide. No torch."""

"""Measure one process of a cell (or of a study) in this process: models, inputs, warm-up and timing,
compile statistics, accuracy, the profiler pass, the environment record. The modules that import torch."""

"""compile-bench: eager vs torch.compile latency of Hugging Face vision models, as a report.

Data flows one way: parameters -> config -> models/inputs -> timing -> stats -> results -> notebooks
-> report. Importing this package does not import torch; only the modules that must do.
"""

__version__ = "0.1.0"

"""compile-bench: eager vs torch.compile latency of Hugging Face vision models, as a report.

Data flows one way: parameters -> config -> models/inputs -> timing -> stats -> results -> notebooks
-> report. Importing this package does not import torch; only the modules that must do.

In a notebook: `bench_utils.race(model, example_inputs)` races a model you hold (bench_utils/explore/).
"""

__version__ = "0.1.0"
__all__ = ["race", "Answer", "__version__"]


def __getattr__(name: str):
    """race and Answer, imported on first use: the command line needs neither (nor pandas at its start)."""
    if name in ("race", "Answer"):
        from . import explore

        return getattr(explore, name)
    raise AttributeError(f"module 'bench_utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

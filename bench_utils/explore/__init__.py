"""Explore in a notebook: `race(model, example_inputs)` answers the project's question about a model the
notebook holds, with the engine's own measurement (race.py), and returns an `Answer` (answer.py)."""

from .answer import Answer
from .race import race

__all__ = ["race", "Answer"]

"""Launchers: what starts the sweep loop's units of work and hands their rows back (the Launcher
protocol below, which every launcher satisfies: tests/test_loop.py checks it). local.py: this machine,
one unit at a time; ray.py: a Ray cluster, a group's rounds in an actor on a node with the profile's
GPU type."""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Launcher(Protocol):
    """How the sweep loop (sweep/loop.py) hands out units (a Round or a study Job) and takes rows back."""

    capacity: int  # units measured at once

    def start(self, unit, keep: bool) -> None:
        """Begin measuring `unit`; `keep`: its group's workers stay for a later round."""

    def finished(self) -> list[tuple]:
        """Block until at least one started unit ended: [(unit, its rows)]."""

    def take_ended_rows(self) -> list:
        """Rows for earlier units given the exit codes of workers that ended since."""

    def close(self) -> list:
        """End every worker: the last such rows."""

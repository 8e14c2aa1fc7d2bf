"""Launchers: what starts the sweep loop's units of work and hands their rows back. A launcher has a
`capacity` (units measured at once), `start(unit, keep)`, `finished()` (blocks until at least one unit
ended: [(unit, its rows)]), `take_ended_rows()` (earlier rows given the exit codes of workers that
ended since) and `close()` (ends every worker: the last such rows). local.py: this machine, one unit at
a time; ray.py: a Ray cluster, a group's rounds in an actor on a node with the profile's GPU type."""

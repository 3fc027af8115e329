"""Planners: pure arithmetic that needs no data (docs/planning.md)."""

"""Planners: pure arithmetic that needs no data (analyses.md sections H and I)."""

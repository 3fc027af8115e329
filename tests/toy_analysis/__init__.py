"""A toy analysis added the way docs/development.md says ("Adding an analysis"), used only by
tests/test_analyses_registry.py: queries/analyses/attempt_outcomes_by_window.sql (the SQL file),
analysis.py (the analysis module), section.py (the report section); the registry row is added
by the test's fixture. Nothing here ships."""

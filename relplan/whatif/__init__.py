"""`relplan whatif`: replay an incident under each control and hand over the settings.

Modules: fit.py (workspace -> scenario with provenance), figures.py (what is compared),
check.py (the fit check), controls.py (the one list of controls), replay.py (controls ×
seeds in parallel processes), settings.py (what to configure), run.py (all of it: `whatif()`),
render.py (the text), model.py (the result models, free of the simulator so the report can
show them). docs/whatif.md describes the method.
"""

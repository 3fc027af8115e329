"""A toy input format that proves the recipe of docs/development.md ("Adding an input
format"): one module (ping.py) declares it; tests/test_ingest_recipe.py registers it inside
its test only and checks it then appears everywhere the registry feeds."""

"""Pure helpers the tests call with arguments: data builders, readers and small tools.

The expensive shared things built from them (the incident workspace, the rendered sample
report, simulated runs, backfilled Prometheus servers, the browser) are fixtures in
tests/conftest.py; take those as test arguments rather than building them again.
"""

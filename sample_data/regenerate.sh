#!/bin/sh
# Regenerates the sample runs from relplan's built-in scenarios (deterministic: the same
# relplan version and seed give the same bytes). Run from anywhere:
#     sh sample_data/regenerate.sh
set -eu
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
# The incident: a 2.7 C^ pulse, clients retrying, immediate cancellation: metastable.
"$PY" -m relplan simulate pulse-retry-cancel --seed 1 --out sample_data/pulse-retry-cancel
# A recovery: the same pulse and clients, retries coalesced, cancellation deferred 10 s.
"$PY" -m relplan simulate pulse-retry-coalesce --seed 1 --out sample_data/pulse-retry-coalesce
du -sh sample_data/pulse-retry-cancel sample_data/pulse-retry-coalesce

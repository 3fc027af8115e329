"""relplan's own formats: canonical proxy/engine records (JSON Lines, CSV, Parquet) and run.json."""

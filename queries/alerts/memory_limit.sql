-- DuckDB's memory limit as set now (e.g. '976.5 MiB'), to restore after the streaming
-- evaluator lowers it.
-- params:
select current_setting('memory_limit') as memory_limit

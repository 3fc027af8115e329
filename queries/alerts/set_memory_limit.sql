-- Set DuckDB's memory limit (a size such as '256MB'): the streaming evaluator lowers it while
-- its batches re-read the samples table, and restores it after.
-- params: limit
set memory_limit = $limit

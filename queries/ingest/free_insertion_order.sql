-- The workspace's setting outside the fast JSON reader: rows need not keep their order, which
-- lets DuckDB insert in parallel.
-- params:
set preserve_insertion_order = false

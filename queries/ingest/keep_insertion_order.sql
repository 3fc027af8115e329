-- Keep rows in file order while DuckDB's typed JSON reader stages a file: the fast reader's
-- line numbers come from the order its rows land in (ingest/stage_set_base.sql).
-- params:
set preserve_insertion_order = true

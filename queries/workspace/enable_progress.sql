-- Let DuckDB track the progress of the running query (relplan polls it with
-- query_progress() for a terminal's progress bar) without printing its own bar.
-- params:
set enable_progress_bar = true;
set enable_progress_bar_print = false;

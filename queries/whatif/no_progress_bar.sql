-- Turns off DuckDB's progress bar on a replay's in-memory workspace: replays run in worker
-- processes whose stderr may be the user's terminal, where only relplan's own bar belongs.
-- params:
set enable_progress_bar = false

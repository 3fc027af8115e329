-- Loads the scheduler counters (type = 'stats') of a simulator engine.parquet into the
-- workspace's engine_stats table.
-- params: path, source_id
insert into engine_stats
select step, t_issue, num_running, num_waiting, num_batched_tokens, kv_usage, replica,
       $source_id, file_row_number + 1
from read_parquet($path, file_row_number = true)
where type = 'stats'

-- Loads the (step, execution) records (type = 'step') of a simulator engine.parquet into the
-- workspace's steps table.
-- params: path, source_id
insert into steps
select step, t_issue, t_done, execution_id, prompt_computed, coalesce(prompt_cached, 0),
       coalesce(decode_tokens, 0), replica, $source_id, file_row_number + 1
from read_parquet($path, file_row_number = true)
where type = 'step'

-- Loads the lifecycle events (type = 'event') of a simulator engine.parquet into the
-- workspace's events table.
-- params: path, source_id
insert into events
select t, execution_id, event, prompt_tokens, replica, $source_id, file_row_number + 1
from read_parquet($path, file_row_number = true)
where type = 'event'

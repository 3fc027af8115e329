-- Store the engine lifecycle events that passed (reason IS NULL) of this ingest.
-- params:
insert into events
select t, execution_id, event, prompt_tokens::bigint, replica, source_id, ln
from engine_rows
where type = 'event'

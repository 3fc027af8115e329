-- Store the engine lifecycle events that passed (reason IS NULL) of this ingest.
-- params:
insert into events by name
select
    t, execution_id, event, prompt_tokens::bigint as prompt_tokens, replica, source_id,
    ln as source_row, finish_reason, output_tokens::bigint as output_tokens,
    cached_tokens::bigint as cached_tokens, preemptions::bigint as preemptions,
    max_tokens::bigint as max_tokens
from engine_rows
where type = 'event'

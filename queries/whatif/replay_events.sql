-- A replay's engine lifecycle events into `events`, as `relplan ingest` stores the `event`
-- rows of engine.parquet (ingest/direct_parquet_events.sql): `replay_events` is the
-- simulator's frame (relplan/sim/writer.py event_frame) registered on the replay's in-memory
-- workspace, with `ln` its 1-based row number (the events are the file's first rows).
-- tests/test_whatif_load.py holds the two paths equal.
-- params: source_id
insert into events by name
select
    t, execution_id, event, prompt_tokens, null::varchar as replica,
    $source_id as source_id, ln as source_row, finish_reason, output_tokens,
    null::bigint as cached_tokens, preemptions, max_tokens
from replay_events

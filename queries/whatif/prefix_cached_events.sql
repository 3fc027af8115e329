-- The shared prompt prefix the engine found cached, from the requests' ends when the trace has
-- no step records (relplan whatif fit; the relplan vLLM plugin's `finished`/`aborted` events
-- carry cached_tokens, schema version 3): per execution its end's cached_tokens; the most
-- common value and how many executions had it (as whatif/prefix_cached.sql for steps).
-- Columns: executions, mode_tokens, at_mode (executions 0 without any cached_tokens).
-- params:
with ends as (
    select execution_id, max(cached_tokens) as cached
    from events
    where event in ('finished', 'aborted') and cached_tokens is not null
    group by execution_id
),
m as (select mode(cached) as mode_tokens from ends)
select (select count(*) from ends) as executions, m.mode_tokens,
       (select count(*) from ends where cached = m.mode_tokens) as at_mode
from m

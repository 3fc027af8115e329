-- The columns schema version 3 added to events and engine_stats, NULL, for a version-1 or -2
-- workspace opened read-only (and so not migrated): temp views of the same names over the
-- stored tables (named by workspace/set_stored_since_v2.sql), their rows as stored. Columns and
-- order as in queries/schema.sql.
-- params:
create or replace temp view events as
    select * from query_table(getvariable('rp_stored_v2').events)
    union all by name
    select null::varchar as finish_reason, null::bigint as output_tokens,
           null::bigint as cached_tokens, null::bigint as preemptions, null::bigint as max_tokens
    where false;
create or replace temp view engine_stats as
    select * from query_table(getvariable('rp_stored_v2').engine_stats)
    union all by name
    select null::bigint as prompt_computed, null::bigint as decode_tokens,
           null::double as elapsed_ms, null::bigint as num_preempted,
           null::bigint as prefix_queries, null::bigint as prefix_hits
    where false;

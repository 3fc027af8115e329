-- Views over attached Parquet (`relplan ingest --attach`): read in place, typed like the
-- stored tables. Needs ingest/macros.sql and ingest/engine_macros.sql (rp_engine_template,
-- rp_engine_type) and two session variables, set by relplan.workspace.attached:
--   rp_attached_globs  MAP(source_id -> glob): the paths are bound values, never SQL text;
--   rp_scope           STRUCT(lo, hi, replicas): the partitions to read. lo and hi are
--                      'YYYY-MM-DDTHH' (the hours of --from and --to), replicas a list or NULL.
-- Hive partitions become columns (day, hour, replica, ...; kept as text; an hour compares as
-- two digits, so `hour=9` is `hour=09`, checked 0-23 at attach). A filter on them
-- prunes whole files before they are opened: `day` between the days of lo and hi, `day`
-- and `hour` between lo and hi, `replica` in the list. Paths without such a key are read
-- whatever the scope. Provenance: source_id, source_row (the row in its file, 1-based) and
-- source_file (the file).
-- rp_attached_engine(sid): every engine record of attachment sid, with `type_`.
-- rp_attached_steps / _events / _stats(sid): its rows in the shape of steps / events /
--   engine_stats, plus source_file and the partition columns.
-- params:
create or replace temp macro rp_attached_engine(sid) as table
    select *, rp_engine_type(
            type, event, prompt_computed, num_running, num_waiting, num_batched_tokens, kv_usage
        ) as type_
    from (
        select * from rp_engine_template()
        union all by name
        select null::varchar as filename, null::bigint as file_row_number,
               null::varchar as day, null::varchar as hour
        where false
        union all by name
        select * from read_parquet(
            getvariable('rp_attached_globs')[sid], hive_partitioning = true,
            hive_types_autocast = false, union_by_name = true, filename = true,
            file_row_number = true)
    )
    where (day is null or day between left(getvariable('rp_scope').lo, 10)
                                  and left(getvariable('rp_scope').hi, 10))
      and (day is null or hour is null
           or day || 'T' || hour between getvariable('rp_scope').lo and getvariable('rp_scope').hi
           or (length(hour) = 1 and day || 'T0' || hour
               between getvariable('rp_scope').lo and getvariable('rp_scope').hi))
      and (getvariable('rp_scope').replicas is null
           or list_contains(getvariable('rp_scope').replicas, replica));
create or replace temp macro rp_attached_steps(sid) as table
    select * exclude (type, type_, t, event, prompt_tokens, num_running, num_waiting,
                      num_batched_tokens, kv_usage, elapsed_ms, num_preempted,
                      prefix_queries, prefix_hits, finish_reason, output_tokens,
                      cached_tokens, preemptions, max_tokens, _ln, filename, file_row_number)
        replace (step::bigint as step, t_issue::double as t_issue, t_done::double as t_done,
                 prompt_computed::bigint as prompt_computed,
                 coalesce(prompt_cached, 0)::bigint as prompt_cached,
                 coalesce(decode_tokens, 0)::bigint as decode_tokens),
        sid::integer as source_id, file_row_number + 1 as source_row, filename as source_file
    from rp_attached_engine(sid)
    where type_ = 'step';
create or replace temp macro rp_attached_events(sid) as table
    select * exclude (type, type_, step, t_issue, t_done, prompt_computed, prompt_cached,
                      decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
                      elapsed_ms, num_preempted, prefix_queries, prefix_hits,
                      _ln, filename, file_row_number)
        replace (t::double as t, prompt_tokens::bigint as prompt_tokens,
                 output_tokens::bigint as output_tokens, cached_tokens::bigint as cached_tokens,
                 preemptions::bigint as preemptions, max_tokens::bigint as max_tokens),
        sid::integer as source_id, file_row_number + 1 as source_row, filename as source_file
    from rp_attached_engine(sid)
    where type_ = 'event';
create or replace temp macro rp_attached_stats(sid) as table
    select * exclude (type, type_, t, execution_id, event, prompt_tokens, t_done,
                      prompt_cached, finish_reason, output_tokens, cached_tokens,
                      preemptions, max_tokens, _ln, filename, file_row_number)
        replace (step::bigint as step, t_issue::double as t_issue,
                 num_running::bigint as num_running, num_waiting::bigint as num_waiting,
                 num_batched_tokens::bigint as num_batched_tokens, kv_usage::double as kv_usage,
                 prompt_computed::bigint as prompt_computed,
                 decode_tokens::bigint as decode_tokens, elapsed_ms::double as elapsed_ms,
                 num_preempted::bigint as num_preempted,
                 prefix_queries::bigint as prefix_queries, prefix_hits::bigint as prefix_hits),
        sid::integer as source_id, file_row_number + 1 as source_row, filename as source_file
    from rp_attached_engine(sid)
    where type_ = 'stats';

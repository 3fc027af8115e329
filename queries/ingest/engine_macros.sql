-- The engine record rules (docs/formats.md, Engine trace) as macros, so staged checks
-- (ingest/engine_checked.sql) and the direct Parquet inserts (ingest_direct_parquet_*.sql)
-- apply exactly the same ones.
-- rp_engine_type: `type`, or, when absent, what the fields say: `event` -> event,
--   `prompt_computed` -> step, a stats counter -> stats (separate files need no type column).
-- rp_engine_reason: why a record breaks the contract, NULL when it is fine. event: t,
--   execution_id, a known event, prompt_tokens on `arrived` (canonical traces only: vLLM logs
--   do not carry it); step: step, t_issue, t_done, execution_id, prompt_computed,
--   t_done >= t_issue; stats: step, t_issue, kv_usage in 0..1; every count a whole number
--   >= 0 that fits a bigint exactly (rp_bad_count) and every time plausible (rp_bad_epoch).
--   One coalesce of the checks in that order, each bound once (a `when X is not null then X`
--   binds X twice: the checking summary of a small vLLM log took 68 ms of CPU, now 35).
-- rp_engine_csv(path) / rp_engine_parquet(path): a CSV or Parquet engine file (rp_csv_rows,
--   rp_parquet_rows in ingest/macros.sql) unioned BY NAME with an empty template, so
--   columns the file lacks are NULL (numeric ones untyped, so a Parquet boolean reaches rp_num,
--   which refuses it); rp_engine_parquet_typed adds `type_` (rp_engine_type).
-- rp_engine_typed(r): the row `r` (a struct holding the engine columns, of any type: the text of a
--   CSV or JSON line, the types of a Parquet file) converted to the staging types, a struct in
--   the staging column order (relplan/ingest/columns.py). Every reader of the canonical
--   engine records unnests it, so the typed column list is written once, here.
-- rp_engine_perr(r): why the fields of one record do not convert (rp_bad_*), '; '-joined;
--   NULL when they all do.
-- rp_engine_ok(...): a quick test, for canonical records of known type (the direct inserts and
--   the typed JSON Lines read), that passes only records rp_engine_reason would pass (it is TRUE
--   only where the reason is NULL; FALSE may still be a good record, such as an elapsed_ms past
--   1e300). rp_time_ok / rp_count_ok: a time or count that needs no message (in range, finite,
--   whole).
-- rp_engine_checked(..., place): what a direct insert keeps of a record of its type: TRUE when
--   rp_engine_ok passes it, else an error naming `place` (the insert rolls back and the driver
--   stages the file, whose checks, rp_engine_reason, name a bad record's FILE:LINE or keep a
--   good one). The reason is not bound here: binding it took about 6 ms of CPU in each of the
--   three direct Parquet inserts, for reasons a clean file never needs.
-- params:
create or replace temp macro rp_engine_type(
    type, event, prompt_computed, num_running, num_waiting, num_batched_tokens, kv_usage
) as coalesce(type, case
    when event is not null then 'event'
    when prompt_computed is not null then 'step'
    when num_running is not null or num_waiting is not null
         or num_batched_tokens is not null or kv_usage is not null then 'stats'
end);
create or replace temp macro rp_engine_bad_v3(
    num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens, preemptions,
    max_tokens
) as coalesce(
    rp_bad_count('num_preempted', num_preempted, 9007199254740992),
    rp_bad_count('prefix_queries', prefix_queries, 9007199254740992),
    rp_bad_count('prefix_hits', prefix_hits, 9007199254740992),
    rp_bad_count('output_tokens', output_tokens, 9007199254740992),
    rp_bad_count('cached_tokens', cached_tokens, 9007199254740992),
    rp_bad_count('preemptions', preemptions, 9007199254740992),
    rp_bad_count('max_tokens', max_tokens, 9007199254740992));
create or replace temp macro rp_engine_reason(
    type, t, execution_id, event, prompt_tokens, step, t_issue, t_done, prompt_computed,
    prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
    elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
    preemptions, max_tokens, origin
) as coalesce(
    case
        when type is null then 'type is missing; expected event, step or stats'
        when type not in ('event', 'step', 'stats')
            then 'type ''' || left(type, 40) || ''' is not one of event, step, stats'
        when type = 'event' and t is null then 't is missing; expected the time of the event'
        when type in ('event', 'step') and execution_id is null
            then 'execution_id is missing; expected the engine request id'
        when type = 'event' and event is null
            then 'event is missing; expected arrived, scheduled, first_token, preempted,'
                || ' aborted, finished or rejected'
        when type = 'event' and event not in (
                'arrived', 'scheduled', 'first_token', 'preempted', 'aborted', 'finished',
                'rejected')
            then 'event ''' || left(event, 40) || ''' is not one of arrived, scheduled,'
                || ' first_token, preempted, aborted, finished, rejected'
        when type = 'event' and event = 'arrived' and prompt_tokens is null
             and origin = 'canonical'
            then 'prompt_tokens is missing on an arrived event; expected the prompt length'
        when type in ('step', 'stats') and step is null
            then 'step is missing; expected the engine step number'
        when type in ('step', 'stats') and t_issue is null then 't_issue is missing; expected a time'
        when type = 'step' and t_done is null then 't_done is missing; expected a time'
        when type = 'step' and prompt_computed is null
            then 'prompt_computed is missing; expected the prompt tokens computed in this step'
    end,
    rp_bad_epoch('t', t), rp_bad_epoch('t_issue', t_issue), rp_bad_epoch('t_done', t_done),
    case
        when type = 'step' and t_done < t_issue
            then 't_done (' || t_done || ') is before t_issue (' || t_issue
                || '); expected t_done >= t_issue'
    end,
    rp_bad_count('step', step, 9007199254740992),
    rp_bad_count('prompt_tokens', prompt_tokens, 9007199254740992),
    rp_bad_count('prompt_computed', prompt_computed, 9007199254740992),
    rp_bad_count('prompt_cached', prompt_cached, 9007199254740992),
    rp_bad_count('decode_tokens', decode_tokens, 9007199254740992),
    rp_bad_count('num_running', num_running, 9007199254740992),
    rp_bad_count('num_waiting', num_waiting, 9007199254740992),
    rp_bad_count('num_batched_tokens', num_batched_tokens, 9007199254740992),
    rp_engine_bad_v3(num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
                     preemptions, max_tokens),
    case
        when isnan(kv_usage) then 'kv_usage is not a number; expected a fraction'
        when kv_usage < 0 or kv_usage > 1
            then 'kv_usage ' || kv_usage || ' is outside 0..1; expected a fraction'
        when isnan(elapsed_ms) or elapsed_ms < 0
            then 'elapsed_ms ' || elapsed_ms || ' is not a duration; expected milliseconds >= 0'
        when prefix_hits > prefix_queries
            then 'prefix_hits (' || try_cast(prefix_hits as bigint) || ') exceed prefix_queries ('
                || try_cast(prefix_queries as bigint) || '); expected hits <= queries'
    end
);
create or replace temp macro rp_engine_template() as table
    select
        null::bigint as _ln, null::varchar as type, null as t,
        null::varchar as execution_id, null::varchar as event,
        null as prompt_tokens, null::varchar as replica, null as step,
        null as t_issue, null as t_done, null as prompt_computed,
        null as prompt_cached, null as decode_tokens,
        null as num_running, null as num_waiting,
        null as num_batched_tokens, null as kv_usage,
        null as elapsed_ms, null as num_preempted, null as prefix_queries,
        null as prefix_hits, null::varchar as finish_reason, null as output_tokens,
        null as cached_tokens, null as preemptions, null as max_tokens
    where false;
create or replace temp macro rp_engine_csv(path) as table
    select * from rp_engine_template() union all by name select * from rp_csv_rows(path);
create or replace temp macro rp_engine_parquet(path) as table
    select * from rp_engine_template() union all by name select * from rp_parquet_rows(path);
create or replace temp macro rp_engine_parquet_typed(path) as table
    select
        *,
        rp_engine_type(
            type, event, prompt_computed, num_running, num_waiting, num_batched_tokens, kv_usage
        ) as type_
    from rp_engine_parquet(path);
create or replace temp macro rp_engine_typed(r) as struct_pack(
    type := rp_str(r.type), t := rp_time(r.t), execution_id := rp_str(r.execution_id),
    event := rp_str(r.event), prompt_tokens := rp_num(r.prompt_tokens),
    replica := rp_str(r.replica), step := rp_num(r.step), t_issue := rp_time(r.t_issue),
    t_done := rp_time(r.t_done), prompt_computed := rp_num(r.prompt_computed),
    prompt_cached := rp_num(r.prompt_cached), decode_tokens := rp_num(r.decode_tokens),
    num_running := rp_num(r.num_running), num_waiting := rp_num(r.num_waiting),
    num_batched_tokens := rp_num(r.num_batched_tokens), kv_usage := rp_num(r.kv_usage),
    elapsed_ms := rp_num(r.elapsed_ms), num_preempted := rp_num(r.num_preempted),
    prefix_queries := rp_num(r.prefix_queries), prefix_hits := rp_num(r.prefix_hits),
    finish_reason := rp_str(r.finish_reason), output_tokens := rp_num(r.output_tokens),
    cached_tokens := rp_num(r.cached_tokens), preemptions := rp_num(r.preemptions),
    max_tokens := rp_num(r.max_tokens)
);
create or replace temp macro rp_engine_perr(r) as
    nullif(concat_ws('; ',
        rp_bad_time('t', r.t), rp_bad_num('prompt_tokens', r.prompt_tokens),
        rp_bad_num('step', r.step), rp_bad_time('t_issue', r.t_issue),
        rp_bad_time('t_done', r.t_done), rp_bad_num('prompt_computed', r.prompt_computed),
        rp_bad_num('prompt_cached', r.prompt_cached), rp_bad_num('decode_tokens', r.decode_tokens),
        rp_bad_num('num_running', r.num_running), rp_bad_num('num_waiting', r.num_waiting),
        rp_bad_num('num_batched_tokens', r.num_batched_tokens), rp_bad_num('kv_usage', r.kv_usage),
        rp_bad_num('elapsed_ms', r.elapsed_ms), rp_bad_num('num_preempted', r.num_preempted),
        rp_bad_num('prefix_queries', r.prefix_queries), rp_bad_num('prefix_hits', r.prefix_hits),
        rp_bad_num('output_tokens', r.output_tokens), rp_bad_num('cached_tokens', r.cached_tokens),
        rp_bad_num('preemptions', r.preemptions), rp_bad_num('max_tokens', r.max_tokens)),
        '');
create or replace temp macro rp_time_ok(x) as x is null or (x >= 0 and x < 4102444800);
create or replace temp macro rp_count_ok(x) as
    x is null or (x >= 0 and x = floor(x) and x <= 9007199254740992);
create or replace temp macro rp_engine_ok(
    type, t, execution_id, event, prompt_tokens, step, t_issue, t_done, prompt_computed,
    prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
    elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
    preemptions, max_tokens
) as
    case type
        when 'step' then execution_id is not null and step is not null
            and t_issue is not null and t_done is not null and prompt_computed is not null
            and t_done >= t_issue
        when 'stats' then step is not null and t_issue is not null
        when 'event' then t is not null and execution_id is not null
            and event in (
                'arrived', 'scheduled', 'first_token', 'preempted', 'aborted', 'finished',
                'rejected')
            and (event <> 'arrived' or prompt_tokens is not null)
        else false
    end
    and rp_time_ok(t) and rp_time_ok(t_issue) and rp_time_ok(t_done)
    and rp_count_ok(step) and rp_count_ok(prompt_tokens) and rp_count_ok(prompt_computed)
    and rp_count_ok(prompt_cached) and rp_count_ok(decode_tokens) and rp_count_ok(num_running)
    and rp_count_ok(num_waiting) and rp_count_ok(num_batched_tokens)
    and rp_count_ok(num_preempted) and rp_count_ok(prefix_queries) and rp_count_ok(prefix_hits)
    and rp_count_ok(output_tokens) and rp_count_ok(cached_tokens) and rp_count_ok(preemptions)
    and rp_count_ok(max_tokens)
    and (kv_usage is null or (kv_usage >= 0 and kv_usage <= 1))
    and (elapsed_ms is null or (elapsed_ms >= 0 and elapsed_ms <= 1e300))
    and (prefix_hits is null or prefix_queries is null or prefix_hits <= prefix_queries);
create or replace temp macro rp_engine_checked(
    type, t, execution_id, event, prompt_tokens, step, t_issue, t_done, prompt_computed,
    prompt_cached, decode_tokens, num_running, num_waiting, num_batched_tokens, kv_usage,
    elapsed_ms, num_preempted, prefix_queries, prefix_hits, output_tokens, cached_tokens,
    preemptions, max_tokens, place
) as
    case
        when rp_engine_ok(
                type, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
                prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
                num_batched_tokens, kv_usage, elapsed_ms, num_preempted, prefix_queries,
                prefix_hits, output_tokens, cached_tokens, preemptions, max_tokens) then true
        else error('relplan: engine record in ' || place || ' needs the full check')
    end;

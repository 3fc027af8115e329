-- Lifecycle events straight from an engine Parquet file into `events`: fail mode's path for
-- Parquet whose columns already have the canonical types (no staging copy). Each record is
-- checked with rp_engine_reason (ingest_engine_macros.sql) by the insert of its type
-- (this one also checks records of unknown or missing type); a refused one raises, which rolls the
-- ingest back, and the driver then stages
-- the file with ingest_engine_read_parquet.sql to name the first bad row.
-- params: path, source_id
insert into events
with src as (
    select * from (
        select
            null::bigint as _ln, null::varchar as type, null::double as t,
            null::varchar as execution_id, null::varchar as event,
            null::double as prompt_tokens, null::varchar as replica, null::double as step,
            null::double as t_issue, null::double as t_done, null::double as prompt_computed,
            null::double as prompt_cached, null::double as decode_tokens,
            null::double as num_running, null::double as num_waiting,
            null::double as num_batched_tokens, null::double as kv_usage
        where false
    )
    union all by name
    select file_row_number + 1 as _ln, * exclude (file_row_number)
    from read_parquet($path, file_row_number = true)
),
typed as (
    select
        *,
        rp_engine_type(
            type, event, prompt_computed, num_running, num_waiting, num_batched_tokens, kv_usage
        ) as type_
    from src
)
select t, execution_id, event, prompt_tokens::bigint, replica, $source_id, _ln
from typed
where case
    when type_ in ('step', 'stats') then false
    when rp_engine_reason(
            type_, t, execution_id, event, prompt_tokens, step, t_issue, t_done,
            prompt_computed, prompt_cached, decode_tokens, num_running, num_waiting,
            num_batched_tokens, kv_usage, 'canonical') is null then type_ = 'event'
    else error('relplan: refused engine record in row ' || _ln)
end

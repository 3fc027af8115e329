-- Engine records (event, step and stats) from Parquet (`ln` is the 1-based row number). Columns
-- keep the file's types (float64 times
-- need no conversion; strings go through the same rules as JSON text).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template.
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- params: path, source_id, keep_raw
insert into stage_engine
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
    select file_row_number + 1 as _ln, * exclude (file_row_number) from read_parquet($path, file_row_number = true)
)
select
    $source_id, _ln, case when $keep_raw then to_json(src) end,
    nullif(concat_ws('; ',
        rp_bad_time('t', t), rp_bad_num('prompt_tokens', prompt_tokens),
        rp_bad_num('step', step), rp_bad_time('t_issue', t_issue),
        rp_bad_time('t_done', t_done), rp_bad_num('prompt_computed', prompt_computed),
        rp_bad_num('prompt_cached', prompt_cached), rp_bad_num('decode_tokens', decode_tokens),
        rp_bad_num('num_running', num_running), rp_bad_num('num_waiting', num_waiting),
        rp_bad_num('num_batched_tokens', num_batched_tokens), rp_bad_num('kv_usage', kv_usage)), ''),
    'canonical',
    rp_str(type), rp_time(t), rp_str(execution_id), rp_str(event), rp_num(prompt_tokens),
    rp_str(replica), rp_num(step), rp_time(t_issue), rp_time(t_done), rp_num(prompt_computed),
    rp_num(prompt_cached), rp_num(decode_tokens), rp_num(num_running), rp_num(num_waiting),
    rp_num(num_batched_tokens), rp_num(kv_usage)
from src

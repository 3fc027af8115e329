-- Engine records (event, step and stats) from Parquet (`ln` is the 1-based row number). Columns
-- keep the file's types (float64 times
-- need no conversion; strings go through the same rules as JSON text).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template
-- (rp_engine_parquet, ingest/engine_macros.sql).
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- params: path, source_id, keep_raw
insert into stage_engine
select
    $source_id, _ln, case when $keep_raw then to_json(src) end,
    rp_engine_perr(
        t, prompt_tokens, step, t_issue, t_done, prompt_computed, prompt_cached, decode_tokens,
        num_running, num_waiting, num_batched_tokens, kv_usage),
    'canonical',
    rp_str(type), rp_time(t), rp_str(execution_id), rp_str(event), rp_num(prompt_tokens),
    rp_str(replica), rp_num(step), rp_time(t_issue), rp_time(t_done), rp_num(prompt_computed),
    rp_num(prompt_cached), rp_num(decode_tokens), rp_num(num_running), rp_num(num_waiting),
    rp_num(num_batched_tokens), rp_num(kv_usage)
from rp_engine_parquet($path) as src

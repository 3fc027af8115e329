-- Proxy attempts from Parquet (`ln` is the 1-based row number). Columns keep the file's types
-- (float64 times
-- need no conversion; strings go through the same rules as JSON text).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template
-- (rp_proxy_parquet, ingest/proxy_macros.sql).
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- params: path, source_id, keep_raw
insert into stage_proxy
select
    $source_id, _ln, case when $keep_raw then to_json(src) end,
    rp_proxy_perr(
        attempt, t_planned, t_sent, t_end, attached, t_cancel, status, prompt_tokens, max_tokens),
    'canonical',
    rp_str(call_id), rp_num(attempt), rp_time(t_planned), rp_time(t_sent), rp_time(t_end),
    rp_str(outcome), rp_str(execution_id), rp_bool(attached), rp_time(t_cancel), rp_num(status),
    rp_str(model), rp_str(replica), rp_num(prompt_tokens), rp_num(max_tokens)
from rp_proxy_parquet($path) as src

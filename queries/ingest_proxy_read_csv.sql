-- Proxy attempts from CSV with a header row (all columns read as text; `ln` is the line, the
-- header being line 1;
-- quoted fields spanning lines would shift it).
-- Columns the file lacks are NULL: the file is unioned BY NAME with an empty typed template.
-- Columns relplan does not know are ignored (the driver lists them). `raw` is the row as JSON,
-- kept only when $keep_raw (skip mode stores it with each reject).
-- params: path, source_id, keep_raw
insert into stage_proxy
with src as (
    select * from (
        select
            null::bigint as _ln, null::varchar as call_id, null::double as attempt,
            null::double as t_planned, null::double as t_sent, null::double as t_end,
            null::varchar as outcome, null::varchar as execution_id, null::boolean as attached,
            null::double as t_cancel, null::double as status, null::varchar as model,
            null::varchar as replica, null::double as prompt_tokens, null::double as max_tokens
        where false
    )
    union all by name
    select ordinality + 1 as _ln, * exclude (ordinality) from read_csv(
            $path, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"',
            max_line_size = 16777216
        ) with ordinality
)
select
    $source_id, _ln, case when $keep_raw then to_json(src) end,
    nullif(concat_ws('; ',
        rp_bad_num('attempt', attempt), rp_bad_time('t_planned', t_planned),
        rp_bad_time('t_sent', t_sent), rp_bad_time('t_end', t_end),
        rp_bad_bool('attached', attached), rp_bad_time('t_cancel', t_cancel),
        rp_bad_num('status', status), rp_bad_num('prompt_tokens', prompt_tokens),
        rp_bad_num('max_tokens', max_tokens)), ''),
    'canonical',
    rp_str(call_id), rp_num(attempt), rp_time(t_planned), rp_time(t_sent), rp_time(t_end),
    rp_str(outcome), rp_str(execution_id), rp_bool(attached), rp_time(t_cancel), rp_num(status),
    rp_str(model), rp_str(replica), rp_num(prompt_tokens), rp_num(max_tokens)
from src

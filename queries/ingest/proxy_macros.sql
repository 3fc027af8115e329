-- The proxy attempt readers' shared pieces (temp macros, created inside the ingest transaction
-- after ingest/macros.sql, whose conversion macros they use).
-- rp_proxy_csv(path) / rp_proxy_parquet(path): a CSV or Parquet proxy file (rp_csv_rows,
--   rp_parquet_rows) unioned BY NAME with an empty typed template, so columns the file lacks
--   are NULL.
-- rp_proxy_perr: why the text fields of one attempt do not convert (rp_bad_*), '; '-joined;
--   NULL when they all do.
-- params:
create or replace temp macro rp_proxy_template() as table
    select
        null::bigint as _ln, null::varchar as call_id, null::double as attempt,
        null::double as t_planned, null::double as t_sent, null::double as t_end,
        null::varchar as outcome, null::varchar as execution_id, null::boolean as attached,
        null::double as t_cancel, null::double as status, null::varchar as model,
        null::varchar as replica, null::double as prompt_tokens, null::double as max_tokens
    where false;
create or replace temp macro rp_proxy_csv(path) as table
    select * from rp_proxy_template() union all by name select * from rp_csv_rows(path);
create or replace temp macro rp_proxy_parquet(path) as table
    select * from rp_proxy_template() union all by name select * from rp_parquet_rows(path);
create or replace temp macro rp_proxy_perr(
    attempt, t_planned, t_sent, t_end, attached, t_cancel, status, prompt_tokens, max_tokens
) as
    nullif(concat_ws('; ',
        rp_bad_num('attempt', attempt), rp_bad_time('t_planned', t_planned),
        rp_bad_time('t_sent', t_sent), rp_bad_time('t_end', t_end),
        rp_bad_bool('attached', attached), rp_bad_time('t_cancel', t_cancel),
        rp_bad_num('status', status), rp_bad_num('prompt_tokens', prompt_tokens),
        rp_bad_num('max_tokens', max_tokens)), '');

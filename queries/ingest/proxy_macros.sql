-- The proxy attempt readers' shared pieces (temp macros, created inside the ingest transaction
-- after ingest/macros.sql, whose conversion macros they use).
-- rp_proxy_csv(path) / rp_proxy_parquet(path): a CSV or Parquet proxy file (rp_csv_rows,
--   rp_parquet_rows) unioned BY NAME with an empty template, so columns the file lacks
--   are NULL. Its numeric columns are untyped NULLs: a file's own type (a Parquet boolean)
--   reaches rp_num, which refuses it, instead of being cast to a double by the union.
-- rp_proxy_typed(r): the row `r` (a struct holding the proxy columns, of any type: the text of a
--   CSV or JSON line, the types of a Parquet file) converted to the staging types, a struct in
--   the staging column order (relplan/ingest/columns.py). Every reader of the canonical
--   proxy records unnests it, so the typed column list is written once, here.
-- rp_proxy_perr(r): why the fields of one attempt do not convert (rp_bad_*), '; '-joined;
--   NULL when they all do.
-- params:
create or replace temp macro rp_proxy_template() as table
    select
        null::bigint as _ln, null::varchar as call_id, null as attempt,
        null as t_planned, null as t_sent, null as t_end,
        null::varchar as outcome, null::varchar as execution_id, null::boolean as attached,
        null as t_cancel, null as status, null::varchar as model,
        null::varchar as replica, null as prompt_tokens, null as max_tokens
    where false;
create or replace temp macro rp_proxy_csv(path) as table
    select * from rp_proxy_template() union all by name select * from rp_csv_rows(path);
create or replace temp macro rp_proxy_parquet(path) as table
    select * from rp_proxy_template() union all by name select * from rp_parquet_rows(path);
create or replace temp macro rp_proxy_typed(r) as struct_pack(
    call_id := rp_str(r.call_id), attempt := rp_num(r.attempt), t_planned := rp_time(r.t_planned),
    t_sent := rp_time(r.t_sent), t_end := rp_time(r.t_end), outcome := rp_str(r.outcome),
    execution_id := rp_str(r.execution_id), attached := rp_bool(r.attached),
    t_cancel := rp_time(r.t_cancel), status := rp_num(r.status), model := rp_str(r.model),
    replica := rp_str(r.replica), prompt_tokens := rp_num(r.prompt_tokens),
    max_tokens := rp_num(r.max_tokens)
);
create or replace temp macro rp_proxy_perr(r) as
    nullif(concat_ws('; ',
        rp_bad_num('attempt', r.attempt), rp_bad_time('t_planned', r.t_planned),
        rp_bad_time('t_sent', r.t_sent), rp_bad_time('t_end', r.t_end),
        rp_bad_bool('attached', r.attached), rp_bad_time('t_cancel', r.t_cancel),
        rp_bad_num('status', r.status), rp_bad_num('prompt_tokens', r.prompt_tokens),
        rp_bad_num('max_tokens', r.max_tokens)),
        '');

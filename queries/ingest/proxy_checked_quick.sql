-- proxy_checked (ingest/proxy_checked.sql) by a quick test: the same table, whose `reason` is
-- NULL for an attempt that passes every check of ingest/proxy_checked.sql, written as plain
-- conditions (no reason built, no check macro bound beyond rp_time_ok and rp_count_ok of
-- ingest/engine_macros.sql), and a placeholder for any other. The driver makes it first; when
-- its summary finds any placeholder, it makes proxy_checked again with every reason
-- (relplan/ingest/driver.py, _summaries), so the placeholder never reaches a reject or an
-- error. Each condition is at least as strict as the check it stands for: rp_time_ok is
-- rp_bad_epoch finding nothing (NULL, or 0 <= x < 4102444800; NaN is above every number in
-- DuckDB), the counts are rp_bad_count's ranges, and an attempt number given twice for a call
-- fails both of its attempts here (proxy_checked refuses the later one): a count over the
-- partition, not proxy_checked's ordered row_number, which cost about 1.7 ms of CPU on 8
-- rows. With every reason NULL, t_planned_filled is proxy_checked's too. On a tiny file
-- (bench/ingest_tiny.py's) the quick table took about 6 of the full one's 15 ms of CPU less,
-- for reasons a clean file never needs.
-- params:
create or replace temp table proxy_checked as
with s as (
    select
        *,
        count(*) over (partition by call_id, attempt) as same_attempt
    from (
        select
            * exclude (ln),
            coalesce(ln, rowid - (select base from stage_sources p where p.source_id = s.source_id)
                + 1) as ln
        from stage_proxy s
    )
),
r as (
    select
        s.* exclude (same_attempt),
        case
            when perr is null and call_id is not null
                and attempt >= 0 and attempt = floor(attempt) and attempt <= 2147483647
                and t_sent is not null and t_end is not null
                and outcome in ('delivered', 'client_gone', 'shed', 'error')
                and rp_time_ok(t_sent) and rp_time_ok(t_end) and rp_time_ok(t_planned)
                and rp_time_ok(t_cancel)
                and t_end >= t_sent
                and (execution_id is not null or not coalesce(attached, false))
                and (outcome <> 'shed' or execution_id is null)
                and (status is null
                     or (status >= 0 and status = floor(status) and status <= 2147483647))
                and rp_count_ok(prompt_tokens) and rp_count_ok(max_tokens)
                and same_attempt = 1
                and not exists (
                    select 1 from attempts a where a.call_id = s.call_id and a.attempt = s.attempt)
            then null
            else 'not checked yet (ingest/proxy_checked.sql names the reason)'
        end as reason
    from s
)
select
    r.*,
    coalesce(
        t_planned,
        min(t_sent) filter (where attempt = 0) over (partition by call_id, reason is null),
        min(t_sent) over (partition by call_id, reason is null)
    ) as t_planned_filled
from r

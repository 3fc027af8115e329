-- The staged proxy attempts with the reason each breaks the contract (NULL when it is fine)
-- and t_planned filled in. Checks (docs/formats.md, Proxy attempts log): required fields present, attempt a
-- whole number >= 0, outcome a known value, t_end >= t_sent, attached => execution_id,
-- shed => no execution_id, token counts and status whole numbers >= 0 that fit their stored
-- column (rp_bad_count), plausible times (rp_bad_epoch: no epoch milliseconds), and
-- attempt numbers distinct per call: within this ingest (the later line is the bad one) and
-- against attempts already in the workspace.
-- t_planned, when absent, is t_sent of attempt 0 of the same call among the records of this
-- ingest; a call whose attempt 0 is not among them falls back to its earliest t_sent.
-- `ln` of rows the fast JSON reader staged comes from their rowid (ingest/proxy_read_jsonl.sql).
-- A temp table, made once the attempts are staged, first by the quick test of
-- ingest/proxy_checked_quick.sql (relplan/ingest/stage.py, create_checks), then by this query
-- only when that one refused some attempt (relplan/ingest/driver.py, _summaries): the summary, the insert and the rejects read it, so its checks and windows are planned and
-- computed once, not once per reader, and it never changes under them (the check against the
-- workspace's attempts sees them as they were before this ingest's own go in). Dropped with
-- the staging tables (ingest/drop_stage_tables.sql). Each check macro is called once per
-- column (bad_attempt, bad_time, bad_count), not once in a `when` and again in its `then`:
-- DuckDB binds every inlined copy, which took about 5 of this statement's 25 ms of CPU on a
-- small file (bench/ingest_tiny.py's).
-- params:
create or replace temp table proxy_checked as
with s as (
    select
        *,
        case when perr is null then row_number() over (
            partition by call_id, attempt, perr is null order by source_id, ln) end as dup_rank,
        first_value(ln) over (partition by call_id, attempt, perr is null order by source_id, ln)
            as first_ln,
        first_value(source_id) over (
            partition by call_id, attempt, perr is null order by source_id, ln) as first_source,
        rp_bad_count('attempt', attempt, 2147483647) as bad_attempt,
        coalesce(rp_bad_epoch('t_sent', t_sent), rp_bad_epoch('t_end', t_end),
                 rp_bad_epoch('t_planned', t_planned), rp_bad_epoch('t_cancel', t_cancel))
            as bad_time,
        coalesce(rp_bad_count('status', status, 2147483647),
                 rp_bad_count('prompt_tokens', prompt_tokens, 9007199254740992),
                 rp_bad_count('max_tokens', max_tokens, 9007199254740992)) as bad_count
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
        s.* exclude (bad_attempt, bad_time, bad_count),
        coalesce(perr, case
            when call_id is null then 'call_id is missing; expected a string naming the call'
            when attempt is null then 'attempt is missing; expected a whole number >= 0'
            when bad_attempt is not null then bad_attempt
            when t_sent is null then 't_sent is missing; expected a time'
            when t_end is null then 't_end is missing; expected a time'
            when outcome is null
                then 'outcome is missing; expected delivered, client_gone, shed or error'
            when outcome not in ('delivered', 'client_gone', 'shed', 'error')
                then 'outcome ''' || left(outcome, 40)
                    || ''' is not one of delivered, client_gone, shed, error'
            when bad_time is not null then bad_time
            when t_end < t_sent
                then 't_end (' || t_end || ') is before t_sent (' || t_sent
                    || '); expected t_end >= t_sent'
            when coalesce(attached, false) and execution_id is null
                then 'attached is true but execution_id is empty; an attached attempt names'
                    || ' the execution it joined'
            when outcome = 'shed' and execution_id is not null
                then 'outcome is shed but execution_id is ''' || left(execution_id, 60)
                    || '''; a shed attempt has no execution'
            when bad_count is not null then bad_count
            when dup_rank > 1 and first_source = source_id
                then 'attempt ' || attempt::bigint || ' of call ''' || left(call_id, 60)
                    || ''' already appears on line ' || first_ln
                    || '; expected distinct attempt numbers per call'
            when dup_rank > 1
                then 'attempt ' || attempt::bigint || ' of call ''' || left(call_id, 60)
                    || ''' already appears at '
                    || coalesce((select path from stage_sources p where p.source_id = first_source), '?')
                    || ':' || first_ln || '; expected distinct attempt numbers per call'
            when exists (
                select 1 from attempts a where a.call_id = s.call_id and a.attempt = s.attempt)
                then 'attempt ' || attempt::bigint || ' of call ''' || left(call_id, 60)
                    || ''' is already in the workspace; expected distinct attempt numbers per call'
        end) as reason
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

-- The finer time of each event a whole-second source logged (docs/formats.md, "Whole-second
-- times"): vLLM's log writes `MM-DD HH:MM:SS`, so its `arrived` at 16:53:17 happened in
-- [16:53:17, 16:53:18). A finer source that tells the same event inside that second wins:
--   1. the same execution's same event from another engine source with sub-second times;
--   2. the gateway attempt joined to the execution (join_request_ids.sql): its start for
--      `arrived` (nginx sent the request on), its end for `finished`, `aborted`, `rejected`
--      (the gateway closed or answered the request) -- when that attempt's end has sub-second
--      digits (not a `$time_local` log).
-- A witness outside the second is another event (or a clock apart) and is not taken; a
-- refined time is no longer whole, so running this again changes nothing. Only pairs with a
-- source of this ingest ($sources) are looked at. The earliest engine witness wins, else the
-- earliest attempt.
-- params: formats, sources
create or replace temp table _relplan_refined as
with coarse as (
    select e.rowid as rid, e.execution_id, e.event, e.t, e.source_id
    from events e join sources s using (source_id)
    where s.format in (select unnest($formats::varchar[])) and e.t = floor(e.t)
),
witness as (
    select c.rid, c.t as t_logged, c.source_id as coarse_source, f.source_id as fine_source,
           'engine' as by_kind, 0 as rank, f.t
    from coarse c
    join events f
      on f.execution_id = c.execution_id and f.event = c.event
     and f.source_id <> c.source_id and f.t <> floor(f.t)
    where list_contains($sources::integer[], c.source_id)
       or list_contains($sources::integer[], f.source_id)
    union all
    select c.rid, c.t, c.source_id, a.source_id, 'gateway', 1,
           case when c.event = 'arrived' then a.t_sent else a.t_end end
    from coarse c
    join attempts a on a.execution_id = c.execution_id and a.t_end <> floor(a.t_end)
    where c.event in ('arrived', 'finished', 'aborted', 'rejected')
      and (list_contains($sources::integer[], c.source_id)
           or list_contains($sources::integer[], a.source_id))
)
select rid, arg_min(coarse_source, (rank, t)) as coarse_source,
       arg_min(fine_source, (rank, t)) as fine_source, arg_min(by_kind, (rank, t)) as by_kind,
       arg_min(t, (rank, t)) as t
from witness
where t >= t_logged and t < t_logged + 1
group by rid

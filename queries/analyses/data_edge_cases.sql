-- Counts of the edge cases the analyses name rather than guess (issue 5, "Edge cases"):
--   executions_no_terminal     engine executions with no finished, aborted or rejected event
--                              (C counts their tokens as `unfinished`; E ends open waits at T)
--   executions_no_arrived      engine executions with events but no `arrived` (E skips them)
--   attempts_no_execution      attempts without an execution_id (shed, or refused/errored
--                              before reaching an engine)
--   attempts_unmatched         attempts naming an execution_id the engine trace does not have
--                              (0 when there is no engine trace)
--   (steps of executions with no lifecycle event are counted by analyses/wasted_prefill_by_fate.sql,
--   fate `unknown`, in the same pass as the tokens: a second pass over the steps is the
--   costliest thing this file could do)
--   execution_ids_on_several_replicas   ids that occur on more than one replica (executions
--                              are keyed by (replica, execution_id), so they stay apart)
-- params:
with ex as (
    select coalesce(replica, '') as rk, execution_id,
           bool_or(event in ('finished', 'aborted', 'rejected')) as terminal,
           bool_or(event = 'arrived') as arrived
    from events group by all
)
select
    (select count(*) from ex where not terminal) as executions_no_terminal,
    (select count(*) from ex where not arrived) as executions_no_arrived,
    (select count(*) from attempts where execution_id is null) as attempts_no_execution,
    (select case when (select count(*) from events) = 0 then 0 else count(*) end
       from attempts a
      where a.execution_id is not null
        and not exists (select 1 from ex e where e.execution_id = a.execution_id
                          and (a.replica is null or e.rk = '' or a.replica = e.rk))) as attempts_unmatched,
    (select count(*) from (select execution_id from ex group by execution_id having count(*) > 1))
        as execution_ids_on_several_replicas

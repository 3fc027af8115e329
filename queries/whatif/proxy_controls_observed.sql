-- The proxy's controls as the incident shows them (relplan whatif fit):
-- retries (attempts with attempt > 0), attached_retries (of them, those the proxy attached to
-- the call's running execution: coalesced), gone_with_execution (client_gone attempts that
-- own an execution they created), aborted_after_gone (of them, executions the engine aborted
-- after the client left), finished_after_gone (executions that still finished after the
-- client left), the median and p90 (quantile_cont) of the delay from the attempt's end to
-- the engine's first `aborted` event, shed (attempts refused by the proxy or engine:
-- outcome shed or error). An abort counts as after the client left when logged no earlier than
-- `resolution_s` before the attempt's end: vLLM's log stamps whole seconds (the delay is then
-- at least 0).
-- params: resolution_s
with gone as (
    select a.execution_id, a.t_end
    from attempts a
    where a.outcome = 'client_gone' and a.execution_id is not null and not a.attached
),
ev as (
    select execution_id,
           min(t) filter (where event = 'aborted') as t_abort,
           min(t) filter (where event = 'finished') as t_finish
    from events
    where execution_id in (select execution_id from gone)
    group by execution_id
),
j as (
    select g.t_end, e.t_abort, e.t_finish
    from gone g left join ev e using (execution_id)
)
select (select count(*) from attempts where attempt > 0) as retries,
       (select count(*) from attempts where attempt > 0 and attached) as attached_retries,
       (select count(*) from gone) as gone_with_execution,
       count(*) filter (where t_abort >= t_end - $resolution_s - 1e-6) as aborted_after_gone,
       count(*) filter (where t_finish > t_end) as finished_after_gone,
       quantile_cont(greatest(t_abort - t_end, 0), 0.5)
           filter (where t_abort >= t_end - $resolution_s - 1e-6) as abort_delay_median_s,
       quantile_cont(greatest(t_abort - t_end, 0), 0.9)
           filter (where t_abort >= t_end - $resolution_s - 1e-6) as abort_delay_p90_s,
       (select count(*) from attempts where outcome in ('shed', 'error')) as shed
from j

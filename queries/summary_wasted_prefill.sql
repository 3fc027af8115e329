-- Computed prompt tokens by the fate of their execution (analyses.md C), over all steps.
-- Fate, over all the data (the earlier of finished/aborted wins): aborted, finished (delivered
-- or for nobody) or unfinished. Returns all computed tokens, those of aborted executions, those
-- in flight at the abort (steps with t_issue < t_abort <= t_done, t_abort = the engine's
-- `aborted` event), and those of executions aborted with no first_token at or before the abort.
-- params:
with ev as (
    select execution_id,
           min(t) filter (where event = 'aborted') as t_abort,
           min(t) filter (where event = 'finished') as t_finish,
           min(t) filter (where event = 'first_token') as t_first
    from summary_events
    group by execution_id
),
fate as (
    select execution_id, t_abort, t_first,
           (t_abort is not null and (t_finish is null or t_abort < t_finish)) as is_aborted
    from ev
)
select
    coalesce(sum(s.prompt_computed), 0) as computed,
    coalesce(sum(s.prompt_computed) filter (where f.is_aborted), 0) as aborted,
    coalesce(sum(s.prompt_computed) filter (
        where f.is_aborted and s.t_issue < f.t_abort and f.t_abort <= s.t_done), 0) as in_flight,
    coalesce(sum(s.prompt_computed) filter (
        where f.is_aborted and (f.t_first is null or f.t_first > f.t_abort)), 0)
        as before_first_token
from summary_steps s
left join fate f using (execution_id)

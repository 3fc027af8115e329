-- The engine's backlog (executions admitted and not yet ended: waiting + running) from the
-- lifecycle events, as step changes (the `drain` figure, docs/analyses.md "Drained after"):
-- +1 at an execution's first `arrived`, -1 at its first `finished`, `aborted` or `rejected`.
-- An execution with no terminal event contributes no -1 (it stays in the backlog to T);
-- `no_terminal` counts them so the caller can refuse a trace that cannot see completions
-- (vLLM 0.32 logs no finish line without --enable-log-outputs).
-- Columns: t, delta, executions, no_terminal (the last two repeated on every row).
-- params:
with ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as ta,
           min(t) filter (where event in ('finished', 'aborted', 'rejected')) as te
    from events group by all
),
counts as (
    select count(*) filter (where ta is not null) as executions,
           count(*) filter (where ta is not null and te is null) as no_terminal
    from ex
),
changes as (
    select ta as t, 1 as delta from ex where ta is not null
    union all
    select te, -1 from ex where ta is not null and te is not null
)
select c.t, sum(c.delta) as delta, k.executions, k.no_terminal
from changes c cross join counts k
group by c.t, k.executions, k.no_terminal
order by c.t

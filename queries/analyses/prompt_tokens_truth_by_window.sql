-- The engine trace's truth for the counter comparison (the `counters` analysis): per window [a, b)
-- and replica, prompt tokens of executions first `scheduled` in the window (what the
-- prefix-cache query counter counts) and of executions whose first `first_token` is in it
-- (what the prompt-token counter counts). An execution's prompt length is its `arrived`
-- event's prompt_tokens (else any event's). Execution key: (replica, execution_id).
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
ex as (
    select replica, execution_id,
           coalesce(max(prompt_tokens) filter (where event = 'arrived'), max(prompt_tokens)) as prompt,
           min(t) filter (where event = 'scheduled') as t_sched,
           min(t) filter (where event = 'first_token') as t_ft
    from events group by all
)
select w.win_name, e.replica, grouping(e.replica) as all_replicas,
       coalesce(sum(e.prompt) filter (where e.t_sched >= w.a and (e.t_sched < w.b or (w.closed and e.t_sched = w.b))), 0)
           as scheduled_tokens,
       coalesce(sum(e.prompt) filter (where e.t_ft >= w.a and (e.t_ft < w.b or (w.closed and e.t_ft = w.b))), 0)
           as first_output_tokens,
       count(*) filter (where e.prompt is null) as missing_prompt
from ex e cross join win w
group by grouping sets ((w.win_name), (w.win_name, e.replica))

-- Attempts whose execution is unknown, per window of their call: sent (not shed), not
-- attached, yet with no execution_id (docs/workspace.md: NULL when unknown, e.g. Envoy, or a
-- client's record that learns the id only from an answer). The amplification analysis counts
-- an execution by its id (queries/analyses/load_amplification_by_window.sql), so such
-- attempts are missing from executions per call; compare does not show that figure then.
-- A call belongs to the window its t_planned (the earliest of its attempts) falls in.
-- Columns: win_name, sent (attempts sent by the window's calls), unknown (of them, no id)
-- params: w_names, w_starts, w_ends, w_closed
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
calls as (
    select call_id, min(t_planned) as t_planned,
           count(*) filter (where outcome <> 'shed' and not attached) as sent,
           count(*) filter (where outcome <> 'shed' and not attached and execution_id is null)
               as unknown
    from attempts group by call_id
)
select w.win_name, sum(c.sent) as sent, sum(c.unknown) as unknown
from win w join calls c
  on c.t_planned >= w.a and (c.t_planned < w.b or (w.closed and c.t_planned = w.b))
group by w.win_name
order by w.win_name

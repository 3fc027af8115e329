-- Which client timeout cut each failed attempt (the `heavy_requests` analysis): every
-- attempt sent in [$t_from, $t_to] that the client left (outcome client_gone) or that the
-- proxy timed out (outcome error with status 408 or 504), cut at t_cut = t_cancel, else t_end.
-- From the engine trace of its execution (same replica when both name one), token times are
-- the `first_token` event and the t_done of steps with decode tokens, in [t_sent, t_cut]:
--   matched        the attempt names an execution the trace holds;
--   elapsed_s      t_cut - t_sent;
--   n_tokens_times token times seen before the cut (0: no token reached it);
--   ttft_s         first token time - t_sent;
--   gap_at_cut_s   t_cut - the last token time (the silence when it was cut);
--   max_gap_s      the longest gap between two token times before that (null with one);
--   has_steps      the execution has step records (else gaps between tokens are unknown).
-- params: t_from, t_to
with cut as (
    select call_id, attempt, t_sent, coalesce(t_cancel, t_end) as t_cut, outcome, status,
           model, replica, execution_id,
           case when outcome = 'client_gone' then 'client' else 'proxy' end as cut_by
    from attempts
    where t_sent >= $t_from and t_sent <= $t_to
      and (outcome = 'client_gone' or (outcome = 'error' and status in (408, 504)))
),
ex as (
    select distinct coalesce(replica, '') as rk, execution_id from events
    where execution_id in (select execution_id from cut)
),
stepped as (
    select distinct coalesce(replica, '') as rk, execution_id from steps
    where execution_id in (select execution_id from cut)
),
tok as (
    select coalesce(replica, '') as rk, execution_id, t from events
    where event = 'first_token' and execution_id in (select execution_id from cut)
    union all
    select coalesce(replica, '') as rk, execution_id, t_done as t from steps
    where decode_tokens > 0 and execution_id in (select execution_id from cut)
),
m as (
    select c.call_id, c.attempt, c.execution_id, c.t_sent, c.t_cut, e.rk
    from cut c join ex e
      on e.execution_id = c.execution_id and (c.replica is null or e.rk = '' or c.replica = e.rk)
),
matched as (select distinct call_id, attempt from m),
with_steps as (
    select distinct m.call_id, m.attempt
    from m join stepped s on s.execution_id = m.execution_id and s.rk = m.rk
),
seen as (
    select m.call_id, m.attempt, t.t,
           t.t - lag(t.t) over (partition by m.call_id, m.attempt order by t.t) as gap
    from m join tok t on t.execution_id = m.execution_id and t.rk = m.rk
    where t.t >= m.t_sent and t.t <= m.t_cut
),
agg as (
    select call_id, attempt, count(*) as n_token_times, min(t) as t_first, max(t) as t_last,
           max(gap) as max_gap_s
    from seen group by all
)
select c.call_id, c.attempt, c.t_sent, c.outcome, c.status, c.cut_by, c.model, c.replica,
       c.execution_id, c.t_cut - c.t_sent as elapsed_s,
       mt.call_id is not null as matched,
       ws.call_id is not null as has_steps,
       coalesce(g.n_token_times, 0) as n_token_times,
       g.t_first - c.t_sent as ttft_s,
       c.t_cut - g.t_last as gap_at_cut_s,
       g.max_gap_s
from cut c
left join agg g using (call_id, attempt)
left join matched mt using (call_id, attempt)
left join with_steps ws using (call_id, attempt)
order by c.t_sent, c.call_id, c.attempt

-- Computed prompt tokens split by the fate of their execution (analyses.md C), per window
-- of step t_done, for all replicas (replica null) and per replica.
-- Execution key: (replica, execution_id). Fate is decided over ALL the data, not the window:
--   delivered            first `finished` at or before the first `aborted` (a tie counts as
--                        finished), and some proxy attempt with that execution_id (same
--                        replica when both name one) has outcome delivered;
--   finished_for_nobody  finished first, no attempt received it;
--   finished             finished first, but there is no proxy log (delivery unknown; pass
--                        has_proxy = false);
--   aborted              an `aborted` event before any `finished`;
--   unfinished           neither (includes engine refusals, which compute nothing);
--   unknown              steps whose execution has no lifecycle event at all.
-- Columns per (window, replica, fate): prompt_computed, prompt_cached, decode_tokens;
--   inflight_prompt / inflight_decode: tokens of aborted executions in steps with
--     t_issue < t_abort <= t_done (t_abort: the engine's first `aborted`);
--   before_first_output: computed tokens of aborted executions with no `first_token` at or
--     before the abort;
--   recomputed: prompt tokens of steps with t_issue >= the execution's first `preempted`.
-- params: w_names, w_starts, w_ends, w_closed, has_proxy
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'finished') as t_fin,
           min(t) filter (where event = 'aborted') as t_ab,
           min(t) filter (where event = 'first_token') as t_ft,
           min(t) filter (where event = 'preempted') as t_pre
    from events group by all
),
dl as (
    select e.rk, e.execution_id, bool_or(a.outcome = 'delivered') as delivered
    from ex e join attempts a
      on a.execution_id = e.execution_id
     and (a.replica is null or e.rk = '' or a.replica = e.rk)
    group by all
),
fate as (
    select e.rk, e.execution_id, e.t_pre,
           case when e.t_fin is not null and (e.t_ab is null or e.t_fin <= e.t_ab) then
                    case when not $has_proxy then 'finished'
                         when coalesce(d.delivered, false) then 'delivered'
                         else 'finished_for_nobody' end
                when e.t_ab is not null then 'aborted'
                else 'unfinished' end as fate,
           case when e.t_ab is not null and (e.t_fin is null or e.t_ab < e.t_fin)
                then e.t_ab end as t_abort,
           (e.t_ab is not null and (e.t_fin is null or e.t_ab < e.t_fin)
            and (e.t_ft is null or e.t_ft > e.t_ab)) as before_first
    from ex e left join dl d using (rk, execution_id)
),
s as (
    select s.replica, s.t_issue, s.t_done, s.prompt_computed, s.prompt_cached, s.decode_tokens,
           coalesce(f.fate, 'unknown') as fate, f.t_abort, f.t_pre,
           coalesce(f.before_first, false) as before_first
    from steps s left join fate f
      on f.execution_id = s.execution_id and f.rk = coalesce(s.replica, '')
)
select w.win_name, s.replica, grouping(s.replica) as all_replicas, s.fate,
       sum(s.prompt_computed) as prompt_computed,
       sum(s.prompt_cached) as prompt_cached,
       sum(s.decode_tokens) as decode_tokens,
       coalesce(sum(s.prompt_computed) filter (where s.t_issue < s.t_abort and s.t_abort <= s.t_done), 0)
           as inflight_prompt,
       coalesce(sum(s.decode_tokens) filter (where s.t_issue < s.t_abort and s.t_abort <= s.t_done), 0)
           as inflight_decode,
       coalesce(sum(s.prompt_computed) filter (where s.before_first), 0) as before_first_output,
       coalesce(sum(s.prompt_computed) filter (where s.t_issue >= s.t_pre), 0) as recomputed
from s join win w
  on s.t_done >= w.a and (s.t_done < w.b or (w.closed and s.t_done = w.b))
group by grouping sets ((w.win_name, s.fate), (w.win_name, s.replica, s.fate))

-- Computed prompt tokens split by the fate of their execution (the `wasted_prefill` analysis), per time
-- segment of step t_done and per replica. Segments are disjoint: relplan.analyses.context
-- .segments cuts the analysed window at every window boundary ($cuts, sorted, padded with
-- +inf to 12 entries); a step's segment k is the number of cut points <= its t_done (the
-- last cut, $t_last, is the instant T itself); steps outside [cuts[1], $t_last] are left
-- out. The caller sums segments into the run and each phase. One pass over the steps, no
-- range join, a group-by on small keys: this is what keeps C near a bare scan. The CASE
-- covers 12 cut points; more (many phases) go through a slower list filter, same result.
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
-- Columns per (segment k, replica, fate): steps (row count), prompt_computed, prompt_cached, decode_tokens;
--   inflight_prompt / inflight_decode: tokens of aborted executions in steps with
--     t_issue < t_abort <= t_done (t_abort: the engine's first `aborted`);
--   before_first_output: computed tokens of aborted executions with no `first_token` at or
--     before the abort;
--   recomputed: prompt tokens of steps with t_issue >= the execution's first `preempted`.
-- params: cuts, t_last, has_proxy
with
-- shared block (executions_by_window_and_replica.sql and wasted_prefill_by_fate.sql hold
-- it word for word; tests/test_bench_analyze.py checks): each execution's first lifecycle
-- instants, and whether a proxy attempt (same replica when both name one) received it.
ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event = 'rejected') as t_rejected,
           min(t) filter (where event = 'first_token') as t_first_token,
           min(t) filter (where event = 'preempted') as t_preempted,
           min(t) filter (where event = 'aborted') as t_aborted,
           min(t) filter (where event = 'finished') as t_finished
    from events group by all
),
dl as (
    select e.rk, e.execution_id, bool_or(a.outcome = 'delivered') as delivered
    from ex e join attempts a
      on a.execution_id = e.execution_id
     and (a.replica is null or e.rk = '' or a.replica = e.rk)
    group by all
),
-- end of the shared block
fate as (
    select e.rk, e.execution_id, e.t_preempted as t_pre,
           -- 1 delivered, 2 finished_for_nobody, 3 finished, 4 aborted, 5 unfinished
           case when e.t_finished is not null
                     and (e.t_aborted is null or e.t_finished <= e.t_aborted) then
                    case when not $has_proxy then 3
                         when coalesce(d.delivered, false) then 1
                         else 2 end
                when e.t_aborted is not null then 4
                else 5 end::utinyint as fate,
           case when e.t_aborted is not null
                     and (e.t_finished is null or e.t_aborted < e.t_finished)
                then e.t_aborted end as t_abort,
           (e.t_aborted is not null and (e.t_finished is null or e.t_aborted < e.t_finished)
            and (e.t_first_token is null or e.t_first_token > e.t_aborted)) as before_first
    from ex e left join dl d using (rk, execution_id)
),
s as (
    select s.replica, s.prompt_computed, s.prompt_cached, s.decode_tokens,
           case when s.t_done < $cuts[1] or s.t_done > $t_last then null
                when s.t_done < $cuts[2] then 1
                when s.t_done < $cuts[3] then 2
                when s.t_done < $cuts[4] then 3
                when s.t_done < $cuts[5] then 4
                when s.t_done < $cuts[6] then 5
                when s.t_done < $cuts[7] then 6
                when s.t_done < $cuts[8] then 7
                when s.t_done < $cuts[9] then 8
                when s.t_done < $cuts[10] then 9
                when s.t_done < $cuts[11] then 10
                when s.t_done < $cuts[12] then 11
                else 12 + len(list_filter(list_slice($cuts, 13, len($cuts)),
                                          lambda c: c <= s.t_done))
           end as k,
           coalesce(f.fate, 6) as fate,  -- 6 unknown: no lifecycle event
           (s.t_issue < f.t_abort and f.t_abort <= s.t_done) as inflight,
           coalesce(f.before_first, false) as before_first,
           s.t_issue >= f.t_pre as recomputed
    from steps s left join fate f
      on f.execution_id = s.execution_id
     and (f.rk = s.replica or (s.replica is null and f.rk = ''))
),
agg as (
    select s.k, s.replica, s.fate,
           count(*) as steps,
           sum(s.prompt_computed) as prompt_computed,
           sum(s.prompt_cached) as prompt_cached,
           sum(s.decode_tokens) as decode_tokens,
           coalesce(sum(s.prompt_computed) filter (where s.inflight), 0) as inflight_prompt,
           coalesce(sum(s.decode_tokens) filter (where s.inflight), 0) as inflight_decode,
           coalesce(sum(s.prompt_computed) filter (where s.before_first), 0) as before_first_output,
           coalesce(sum(s.prompt_computed) filter (where s.recomputed), 0) as recomputed
    from s
    where s.k is not null
    group by s.k, s.replica, s.fate
)
select k, replica,
       ['delivered', 'finished_for_nobody', 'finished', 'aborted', 'unfinished', 'unknown'][fate]
           as fate,
       steps, prompt_computed, prompt_cached, decode_tokens, inflight_prompt, inflight_decode,
       before_first_output, recomputed
from agg

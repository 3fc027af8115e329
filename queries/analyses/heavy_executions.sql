-- The requests that hurt (the `heavy_requests` analysis), engine side: for every execution
-- (key: replica, execution_id) with a step in [$t_from, $t_to], the top $k by each measure:
--   prefill_gpu_s  its share of the steps that computed its prompt: per step,
--                  (t_done - t_issue) * its prompt_computed / the step's tokens (prompt
--                  computed + decode of every execution in that step on that replica);
--   kv_block_s     KV blocks held x seconds: after each step it holds ceil(tokens / $block_size)
--                  blocks, tokens = prompt computed + cached + decode summed since its last
--                  (re)scheduling (a `preempted` event frees them), until its next step's
--                  t_done, else its first preempted / aborted / finished event at or after
--                  that t_done (none: the hold ends at its last step);
--                  one window over the steps gives each step its blocks and the next step's
--                  t_done; only the last step of each hold looks up the event that ends it
--                  (the step rows are read twice rather than kept: 20 MB less at the peak);
--   duration_s     arrived to its first finished / aborted / rejected event (engine side).
-- With each: the prompt tokens computed (recomputation included), the prompt size on
-- `arrived`, and the first attempt that created it (not attached; same replica when both
-- name one): call_id, attempt, model, max_tokens, outcome. measure: prefill | kv | duration.
-- params: t_from, t_to, block_size, k
with st as (
    select coalesce(replica, '') as rk, step, sum(prompt_computed + decode_tokens) as tokens
    from steps group by all
),
pre as (
    -- each preempted event opens a residency that lasts until the next: n, the preempted
    -- events at or before its start (peers included), is the residency of a step issued in
    -- [t_lo, t_hi); an empty interval (a tie) matches no step
    select coalesce(replica, '') as rk, execution_id, t as t_lo,
           lead(t) over (partition by coalesce(replica, ''), execution_id order by t) as t_hi,
           count(*) over (partition by coalesce(replica, ''), execution_id order by t
                          range between unbounded preceding and current row) as n
    from events where event = 'preempted'
),
ends as (
    select coalesce(replica, '') as rk, execution_id, t from events
    where event in ('preempted', 'aborted', 'finished')
),
s0 as not materialized (
    select coalesce(s.replica, '') as rk, s.execution_id, s.step, s.t_issue, s.t_done,
           s.prompt_computed, s.prompt_computed + s.prompt_cached + s.decode_tokens as held,
           s.source_row, coalesce(p.n, 0) as residency
    from steps s
    left join pre p
      on p.execution_id = s.execution_id and p.rk = coalesce(s.replica, '')
     and p.t_lo <= s.t_issue and (p.t_hi is null or s.t_issue < p.t_hi)
),
base as (
    select rk, execution_id,
           sum(prompt_computed) as prefill_tokens,
           -- summed in step order: a float sum in whatever order the join yields would
           -- differ in its last bit between an attached and a copied trace
           sum(case when st.tokens > 0
                    then (t_done - t_issue) * prompt_computed / st.tokens else 0 end
               order by step) as prefill_gpu_s,
           min(t_issue) as t_first
    from s0 join st using (rk, step)
    group by all
    having max(t_done) >= $t_from and min(t_done) <= $t_to
),
s1 as (
    select rk, execution_id, t_done,
           ceil(sum(held) over w / $block_size) as blocks,
           lead(t_done) over w as next_done
    from s0
    window w as (partition by rk, execution_id, residency order by t_done, step, source_row)
),
held as (
    select rk, execution_id, t_done, blocks * (next_done - t_done) as kv
    from s1 where next_done is not null
    union all
    select l.rk, l.execution_id, l.t_done, l.blocks * (greatest(e.t, l.t_done) - l.t_done) as kv
    from (select * from s1 where next_done is null) l
    asof left join ends e
      on e.rk = l.rk and e.execution_id = l.execution_id and e.t >= l.t_done
),
ex as (
    select b.rk, b.execution_id, b.prefill_tokens, b.prefill_gpu_s, h.kv_block_s, b.t_first
    from base b
    join (select rk, execution_id, sum(kv order by t_done, kv) as kv_block_s
          from held group by rk, execution_id) h
      using (rk, execution_id)
),
ev as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event in ('finished', 'aborted', 'rejected')) as t_terminal,
           min(prompt_tokens) filter (where event = 'arrived') as prompt_tokens
    from events
    where execution_id in (select execution_id from ex)
    group by all
),
creator as (
    select e.rk, e.execution_id,
           arg_min({'call_id': a.call_id, 'attempt': a.attempt, 'model': a.model,
                    'max_tokens': a.max_tokens, 'outcome': a.outcome,
                    'prompt_tokens': a.prompt_tokens},
                   a.t_sent) as a
    from ex e join attempts a
      on a.execution_id = e.execution_id and not a.attached
     and (a.replica is null or e.rk = '' or a.replica = e.rk)
    group by all
),
x as (
    select ex.*, ev.t_arrived, ev.t_terminal, ev.t_terminal - ev.t_arrived as duration_s,
           coalesce(ev.prompt_tokens, c.a.prompt_tokens) as prompt_tokens,
           c.a.call_id as call_id, c.a.attempt as attempt, c.a.model as model,
           c.a.max_tokens as max_tokens, c.a.outcome as outcome
    from ex left join ev using (rk, execution_id) left join creator c using (rk, execution_id)
)
(select 'prefill' as measure, * from x where prefill_gpu_s > 0
 order by prefill_gpu_s desc, rk, execution_id limit $k)
union all
(select 'kv' as measure, * from x where kv_block_s > 0
 order by kv_block_s desc, rk, execution_id limit $k)
union all
(select 'duration' as measure, * from x where duration_s is not null
 order by duration_s desc, rk, execution_id limit $k)

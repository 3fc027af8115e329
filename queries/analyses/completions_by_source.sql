-- Finished requests over [$a, $b] by each source that counts them, with the span each saw
-- (the verdict's "one source of truth" check, docs/analyses.md "Disagreements"):
-- `engine log`: `finished` lifecycle events in the window; `request_success_total`: the rise
-- of vllm:request_success_total{finished_reason=stop|length} over sample pairs inside the
-- window (a drop counts the new value), scraped series only; also `aborted` events and the
-- counter's abort rise.
-- Columns: source, finished, aborted, t_min, t_max, samples.
-- params: a, b
with ev as (
    select count(*) filter (where event = 'finished') as finished,
           count(*) filter (where event = 'aborted') as aborted,
           min(t) as t_min, max(t) as t_max, count(*) as samples
    from events where t >= $a and t <= $b
),
c as (
    select m.labels::varchar as series, coalesce(m.labels['finished_reason'], 'stop') as reason,
           m.t, m.value
    from metric_samples m join sources s using (source_id)
    where m.name = 'vllm:request_success_total' and s.format <> 'vllm_log'
      and m.t >= $a and m.t <= $b
),
pairs as (
    select reason, t,
           case when lead(value) over w >= value then lead(value) over w - value
                else lead(value) over w end as inc
    from c window w as (partition by series order by t)
)
select 'engine log' as source, finished, aborted, t_min, t_max, samples from ev
union all
select 'request_success_total',
       coalesce(sum(inc) filter (where reason in ('stop', 'length')), 0),
       coalesce(sum(inc) filter (where reason = 'abort'), 0),
       min(t), max(t), count(distinct t)
from pairs

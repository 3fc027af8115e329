-- Rolling rise of the prompt-token and prefix-cache query counters (the `counters` analysis,
-- Conventions 4, 5, 8): windows [e - $width, e] evaluated at e = $origin + k * $step for
-- k = $k_first .. $k_last, per replica and for all replicas (all_replicas = 1). Pair rule,
-- reset rule and replica label as in analyses/counter_rise_by_window.sql. Evaluations with no sample
-- pair are absent (the caller fills them in as "no data").
-- params: origin, step, width, k_first, k_last, prompt_name, query_name, label1, label2, label3
with grid as (
    select $origin + k * $step as e from range($k_first, $k_last + 1) r(k)
),
samples as (
    select name, labels::varchar as series, t, value,
           coalesce(labels[$label1], labels[$label2], labels[$label3]) as replica
    from metric_samples
    where name in ($prompt_name, $query_name)
),
pairs as (
    select name, replica, t as t_i,
           lead(t) over w as t_j,
           case when lead(value) over w >= value then lead(value) over w - value
                else lead(value) over w end as inc
    from samples
    window w as (partition by name, series order by t)
)
select g.e, p.replica, grouping(p.replica) as all_replicas,
       coalesce(sum(p.inc) filter (where p.name = $prompt_name), 0) as prompt_rise,
       coalesce(sum(p.inc) filter (where p.name = $query_name), 0) as query_rise
from pairs p join grid g on p.t_i >= g.e - $width and p.t_j <= g.e
where p.t_j is not null
group by grouping sets ((g.e), (g.e, p.replica))
order by g.e

-- Rise of the prompt-token counter and of the prefix-cache query counter per window and
-- replica (the `counters` analysis, Conventions 4 and 8; docs/formats.md, counter resets).
-- A series is (name, labels). Its consecutive samples (t_i, t_i+1) give an increase of
-- v_i+1 - v_i, or v_i+1 itself when the counter dropped (a reset). The rise over [a, b]
-- sums the pairs with a <= t_i and t_i+1 <= b, so adjacent windows add up.
-- The replica is the first present of labels[$label1], [$label2], [$label3] (pass the same
-- label three times for --replica-label); series with none of them have replica null.
-- Rows per (window, replica) and per window for all replicas (all_replicas = 1), with
-- prompt_rise, query_rise, resets (drops seen) and pairs (sample pairs counted).
-- params: w_names, w_starts, w_ends, w_closed, prompt_name, query_name, label1, label2, label3
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
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
                else lead(value) over w end as inc,
           lead(value) over w < value as reset
    from samples
    window w as (partition by name, series order by t)
)
select w.win_name, p.replica, grouping(p.replica) as all_replicas,
       coalesce(sum(p.inc) filter (where p.name = $prompt_name), 0) as prompt_rise,
       coalesce(sum(p.inc) filter (where p.name = $query_name), 0) as query_rise,
       count(*) filter (where p.reset) as resets,
       count(*) as pairs
from pairs p join win w on p.t_i >= w.a and p.t_j <= w.b
where p.t_j is not null
group by grouping sets ((w.win_name), (w.win_name, p.replica))

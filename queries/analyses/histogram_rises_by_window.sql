-- Bucket rises of vLLM's latency histograms per window (the histogram estimates and the
-- share over D, relplan/analyses/histograms.py; docs/analyses.md "Figures from histograms").
-- For each `<base>_bucket` series (base in $bases) the increase between consecutive scrapes
-- (a drop counts the new value: a reset), summed over series (replicas added up) per bucket
-- bound `le`, and the rise of `<base>_count` and `<base>_sum`.
-- A pair (t_i, t_j) counts in [a, b] when a <= t_i and t_j <= b (Conventions 4), or, with
-- $by_end, when a <= t_j < b (series bins: no pair is lost at a bin edge).
-- Columns: win_name, base, le (text; '+Inf' for the last bucket, null for _count/_sum), part
-- (bucket | count | sum), rise, pairs.
-- params: w_names, w_starts, w_ends, w_closed, bases, by_end
with win as (
    select unnest($w_names) as win_name, unnest($w_starts) as a, unnest($w_ends) as b,
           unnest($w_closed) as closed
),
s as (
    select m.name, m.labels::varchar as series, m.labels['le'] as le, m.t, m.value,
           case when m.name like '%\_bucket' escape '\' then 'bucket'
                when m.name like '%\_count' escape '\' then 'count' else 'sum' end as part,
           regexp_replace(m.name, '_(bucket|count|sum)$', '') as base
    from metric_samples m
    where regexp_replace(m.name, '_(bucket|count|sum)$', '') in (select unnest($bases))
      and regexp_matches(m.name, '_(bucket|count|sum)$')
),
pairs as (
    select base, part, le, t as t_i, lead(t) over w as t_j,
           case when lead(value) over w >= value then lead(value) over w - value
                else lead(value) over w end as inc
    from s
    window w as (partition by name, series order by t)
)
select w.win_name, p.base, p.le, p.part, sum(p.inc) as rise, count(*) as pairs
from pairs p join win w
  on case when $by_end then p.t_j >= w.a and (p.t_j < w.b or (w.closed and p.t_j = w.b))
          else p.t_i >= w.a and p.t_j <= w.b end
where p.t_j is not null
group by all

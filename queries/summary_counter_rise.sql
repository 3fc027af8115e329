-- Rise of each counter series over [t_from, t_to] (analyses.md conventions 4 and D): the sum
-- over consecutive sample pairs (t_i, t_i+1) with t_from <= t_i and t_i+1 <= t_to of the
-- difference, where after a drop (a reset) the new value itself counts as the rise.
-- Reads temp table summary_metrics(t, name, series, value); summed per metric name.
-- params: t_from, t_to
with s as (
    select name, series, t, value,
           lag(t) over (partition by name, series order by t) as t_prev,
           lag(value) over (partition by name, series order by t) as v_prev
    from summary_metrics
)
select name,
       sum(case when value >= v_prev then value - v_prev else value end) as rise
from s
where t_prev is not null and t_prev >= $t_from and t <= $t_to
group by name
order by name

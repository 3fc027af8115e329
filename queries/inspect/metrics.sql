-- Metric names found: samples, distinct series, label keys, time span, declared type.
-- params:
with m as (
    select
        name, count(*) as samples, count(distinct labels) as series,
        list_distinct(flatten(list(map_keys(labels)))) as label_keys,
        min(t) as t_min, max(t) as t_max
    from metric_samples
    group by name
),
meta as (
    select name, any_value(type) as type from metric_meta where type is not null group by name
)
select
    m.name,
    coalesce(
        meta.type,
        (select any_value(type) from metric_meta mm
         where mm.type is not null
           and m.name in (mm.name || '_total', mm.name || '_bucket', mm.name || '_sum',
                          mm.name || '_count'))
    ) as type,
    m.samples, m.series, m.label_keys, m.t_min, m.t_max
from m
left join meta using (name)
order by m.name

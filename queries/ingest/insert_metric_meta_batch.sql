-- The # TYPE / # HELP / # UNIT of many metric families at once, from the Arrow batch a reader
-- registers as _relplan_metric_meta (one INSERT instead of one per family).
-- params:
insert into metric_meta
select name, type, help, unit, source_id
from _relplan_metric_meta

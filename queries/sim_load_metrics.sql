-- Loads the samples of a simulator metrics.om.txt, parsed by relplan/sim/summary.py into the
-- registered table sim_metric_rows(t, name, keys, vals, line), into metric_samples.
-- params: source_id
insert into metric_samples
select t, name, map(keys, vals), value, $source_id, line
from sim_metric_rows

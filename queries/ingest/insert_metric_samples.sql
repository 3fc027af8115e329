-- Store the metric samples that passed of this ingest.
-- params:
insert into metric_samples
select t, name, labels, value, source_id, ln
from metrics_rows

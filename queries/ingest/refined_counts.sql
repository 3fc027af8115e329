-- How many whole-second event times each finer source refined (for the ingest's notes).
-- Columns: coarse_source, fine_source, by_kind, refined.
-- params:
select coarse_source, fine_source, by_kind, count(*) as refined
from _relplan_refined
group by all
order by coarse_source, fine_source

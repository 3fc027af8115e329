-- Give each whole-second event the finer time found for it (whole_second_witnesses.sql).
-- params:
update events set t = r.t
from _relplan_refined r
where events.rowid = r.rid

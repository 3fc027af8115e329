-- Time span of what one source stored in events, steps and engine_stats (direct inserts).
-- params: source_id
select min(lo) as t_min, max(hi) as t_max
from (
    select min(t) as lo, max(t) as hi from events where source_id = $source_id
    union all
    select min(t_issue), max(t_done) from steps where source_id = $source_id
    union all
    select min(t_issue), max(t_issue) from engine_stats where source_id = $source_id
)

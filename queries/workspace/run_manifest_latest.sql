-- The run manifest (run.json) most recently ingested, and its phases, one row per phase
-- (a manifest without phases gives one row with a null phase). When several run.json files
-- were ingested, the one with the highest source_id (the latest ingest) wins.
-- params:
with m as (
    select * from manifests order by source_id desc limit 1
)
select m.source_id, m.name, m.capacity_calls_per_s, m.deadline_s, m.delivery_window_s,
       m.overload_phase, m.t0, p.name as phase, p.start_s, p.end_s
from m left join phases p on p.source_id = m.source_id
order by p.start_s, p.name

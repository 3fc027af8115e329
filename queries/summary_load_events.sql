-- Loads the lifecycle events (type = 'event') of a run's engine.parquet as temp table
-- summary_events for the simulator's summary (relplan/sim/summary.py).
-- params: path
create or replace temp table summary_events as
select t, execution_id, event
from read_parquet($path)
where type = 'event'

-- Loads the (step, execution) records (type = 'step') of a run's engine.parquet as temp table
-- summary_steps for the simulator's summary (relplan/sim/summary.py).
-- params: path
create or replace temp table summary_steps as
select step, t_issue, t_done, execution_id, prompt_computed, coalesce(decode_tokens, 0) as decode_tokens
from read_parquet($path)
where type = 'step'

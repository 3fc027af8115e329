-- Loads a run's proxy log (formats.md section 1, Parquet) as temp table summary_proxy for the
-- simulator's summary (relplan/sim/summary.py). t_planned defaults to t_sent of attempt 0.
-- params: path
create or replace temp table summary_proxy as
select call_id, attempt, t_sent, t_end, outcome, execution_id,
       coalesce(attached, false) as attached,
       coalesce(t_planned, min(case when attempt = 0 then t_sent end) over (partition by call_id)) as t_planned
from read_parquet($path)

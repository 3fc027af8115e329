-- One row per scheduler-stats record (relplan/sim/costfit.py), for traces without step records
-- (the vLLM plugin's): the time to the next record of the same replica as the step's duration,
-- its batched tokens and running executions. The last record of each replica has no duration.
-- params:
select
    step,
    lead(t_issue) over (partition by coalesce(replica, '') order by step) - t_issue as seconds,
    num_batched_tokens,
    num_running
from engine_stats
order by coalesce(replica, ''), step

-- Executions per call (relplan whatif's fit check): distinct execution ids the proxy log
-- names, over its calls, for the calls planned in [$t_from, $t_to) (epoch seconds).
-- Columns: calls, executions.
-- params: t_from, t_to
with c as (
    select call_id from attempts group by call_id
    having min(t_planned) >= $t_from and min(t_planned) < $t_to
)
select count(distinct a.call_id) as calls, count(distinct a.execution_id) as executions
from attempts a join c using (call_id)

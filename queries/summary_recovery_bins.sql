-- Calls bucketed by planned arrival in 30 s bins aligned on the end of the overload phase,
-- over [t_from, t_to] (analyses.md B: recovery): per bin the number of calls and of calls
-- delivered on time (within D of the planned arrival). Bins without calls are absent.
-- params: t_from, t_to, deadline, bin_s
with calls as (
    select call_id, min(t_planned) as t_planned,
           min(case when outcome = 'delivered' then t_end end) as t_delivered
    from summary_proxy
    group by call_id
)
select cast(floor((t_planned - $t_from) / $bin_s) as bigint) as bin,
       count(*) as calls,
       count(*) filter (where t_delivered - t_planned <= $deadline) as on_time
from calls
where t_planned >= $t_from and t_planned <= $t_to
group by bin
order by bin

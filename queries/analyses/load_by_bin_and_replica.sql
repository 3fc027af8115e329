-- Load per replica over time (the `amplification` analysis, when work ran on two or more
-- replicas): per replica and bin k (bin k is [t_start + k·bin_s, t_start + (k+1)·bin_s),
-- k < n_bins), what arrived and what completed. From the engine trace when it has lifecycle
-- events (use_events): executions whose first `arrived` is in the bin and that the engine did
-- not refuse (accepted; a refusal is `arrived` then `rejected`), and executions whose first
-- `finished` is in it (completed), execution key (replica, execution_id). Else from the proxy
-- log: attempts sent to the replica (t_sent) and attempts delivered (t_end). Replica '' when
-- the input names none.
-- params: t_start, bin_s, n_bins, use_events
with ex as (
    select coalesce(replica, '') as rk, execution_id,
           min(t) filter (where event = 'arrived') as t_arrived,
           min(t) filter (where event = 'rejected') as t_rejected,
           min(t) filter (where event = 'finished') as t_finished
    from events where $use_events group by all
),
marks as (
    select rk, 'arrived' as what, t_arrived as t from ex
    where t_arrived is not null and t_rejected is null
    union all
    select rk, 'completed', t_finished from ex where t_finished is not null
    union all
    select coalesce(replica, ''), 'arrived', t_sent from attempts where not $use_events
    union all
    select coalesce(replica, ''), 'completed', t_end from attempts
    where not $use_events and outcome = 'delivered'
),
binned as (
    select rk, what, cast(floor((t - $t_start) / $bin_s) as bigint) as k
    from marks where t >= $t_start
)
select rk as replica, k,
       count(*) filter (where what = 'arrived') as arrived,
       count(*) filter (where what = 'completed') as completed
from binned where k < $n_bins
group by all
order by replica, k

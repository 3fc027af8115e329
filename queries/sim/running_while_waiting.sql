-- The batch limit as the incident shows it (relplan/sim/costfit.py): the most requests
-- running at once while others waited (vllm:num_requests_running at the scrapes where
-- vllm:num_requests_waiting > 0, summed over series at the same time), and the most running
-- at any scrape. While work waits, the running count is held at vLLM's --max-num-seqs
-- (or by the KV cache). Columns: max_running_while_waiting, max_running, scrapes_waiting.
-- params:
with r as (
    select t, sum(value) as running from metric_samples
    where name = 'vllm:num_requests_running' group by t
),
w as (
    select t, sum(value) as waiting from metric_samples
    where name = 'vllm:num_requests_waiting' group by t
)
select max(r.running) filter (where w.waiting > 0) as max_running_while_waiting,
       max(r.running) as max_running,
       count(*) filter (where w.waiting > 0) as scrapes_waiting
from r join w using (t)

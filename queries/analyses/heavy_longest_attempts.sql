-- The requests that hurt (the `heavy_requests` analysis), proxy side: the $k attempts sent in
-- [$t_from, $t_to] that ran longest (t_end - t_sent), with what they asked for.
-- params: t_from, t_to, k
select call_id, attempt, t_sent, t_end - t_sent as duration_s, outcome, status, model,
       replica, prompt_tokens, max_tokens, execution_id
from attempts
where t_sent >= $t_from and t_sent <= $t_to
order by duration_s desc, call_id, attempt
limit $k

-- The retries the proxy log shows reaching the engine (relplan whatif fit: whether vLLM's prefix
-- cache served a retry its call's prompt, from the cached-token counter's rise after the first
-- retry). Columns: retries (attempts after a call's first, not shed by a limit), t_first (epoch
-- s of the first; NULL without one).
-- params:
select count(*) as retries, min(t_sent) as t_first
from attempts
where attempt > 0 and outcome is distinct from 'shed'

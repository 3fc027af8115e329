-- Share of executions created by retry attempts (analyses.md A: retry share) over the whole
-- run: executions are the proxy log's non-attached attempts that carry an execution id.
-- params:
select count(*) filter (where attempt > 0) / nullif(count(*), 0) as retry_share
from summary_proxy
where execution_id is not null and not attached

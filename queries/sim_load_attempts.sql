-- Loads a simulator proxy.parquet (formats.md section 1) into the workspace's attempts table
-- (t_planned defaults to t_sent of attempt 0; source_row is the 1-based Parquet row).
-- params: path, source_id
insert into attempts
select call_id, attempt,
       coalesce(t_planned, min(case when attempt = 0 then t_sent end) over (partition by call_id)),
       t_sent, t_end, outcome, execution_id, coalesce(attached, false), t_cancel, status, model,
       replica, prompt_tokens, max_tokens, $source_id, file_row_number + 1
from read_parquet($path, file_row_number = true)

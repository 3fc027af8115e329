-- Append a batch of rows from a Python reader (relplan/ingest/stage.py's StageWriter, fewer
-- than BATCH_ROWS rows) to stage_proxy: one list parameter per column, the rows in the same
-- order in each.
-- params: source_id, ln, raw, perr, origin, call_id, attempt, t_planned, t_sent, t_end, outcome, execution_id, attached, t_cancel, status, model, replica, prompt_tokens, max_tokens
insert into stage_proxy by name
select
    unnest($source_id) as source_id,
    unnest($ln) as ln,
    unnest($raw) as raw,
    unnest($perr) as perr,
    unnest($origin) as origin,
    unnest($call_id) as call_id,
    unnest($attempt) as attempt,
    unnest($t_planned) as t_planned,
    unnest($t_sent) as t_sent,
    unnest($t_end) as t_end,
    unnest($outcome) as outcome,
    unnest($execution_id) as execution_id,
    unnest($attached) as attached,
    unnest($t_cancel) as t_cancel,
    unnest($status) as status,
    unnest($model) as model,
    unnest($replica) as replica,
    unnest($prompt_tokens) as prompt_tokens,
    unnest($max_tokens) as max_tokens

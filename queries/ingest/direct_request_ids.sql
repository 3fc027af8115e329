-- The request ids of one engine file inserted directly (ingest/direct_jsonl_events.sql,
-- ingest/direct_parquet_events.sql), as
-- ingest/insert_engine_request_ids.sql does for staged records (the same two patterns): one
-- row per `arrived` event whose id has vLLM's API form. Runs after the events insert, which
-- refuses bad records, and reads what it stored (a few rows, not the whole staged file).
-- params: source_id
insert into request_ids
select execution_id, execution_id, client_id, $source_id, ln
from (
    select
        execution_id, source_row as ln,
        coalesce(
            nullif(regexp_extract(execution_id, '^(?:chatcmpl|chat|embd)-(.+)$', 1), ''),
            nullif(regexp_extract(execution_id, '^cmpl-(.+?)(?:-\d+)?$', 1), '')
        ) as client_id
    from events
    where source_id = $source_id and event = 'arrived'
)
where client_id is not null

-- The request ids of a canonical engine trace whose execution ids are vLLM's external ids (what
-- the relplan vLLM plugin writes: relplan/vllm_plugin/writer.py): one row per `arrived` event
-- whose id has vLLM's API form, with the client's X-Request-Id inside it, so the gateway's
-- attempts join these executions (ingest/join_request_ids.sql). The two patterns are those of
-- relplan/ingest/vllm/ids.py client_id() (tests/test_vllm_plugin.py checks they agree).
-- A vLLM log's rows (origin 'vllm_log') carry internal ids; their adapter stores their own rows.
-- params:
insert into request_ids
select execution_id, execution_id, client_id, source_id, ln
from (
    select
        execution_id, source_id, ln,
        coalesce(
            nullif(regexp_extract(execution_id, '^(?:chatcmpl|chat|embd)-(.+)$', 1), ''),
            nullif(regexp_extract(execution_id, '^cmpl-(.+?)(?:-\d+)?$', 1), '')
        ) as client_id
    from engine_rows
    where type = 'event' and event = 'arrived' and origin = 'canonical'
)
where client_id is not null

-- Store the request ids a vLLM log gave its executions (relplan/ingest/vllm/ids.py), from the
-- Arrow batch the adapter registers as _relplan_request_ids, inside the ingest transaction.
-- params:
insert into request_ids
select execution_id, external_id, client_id, source_id, source_row
from _relplan_request_ids

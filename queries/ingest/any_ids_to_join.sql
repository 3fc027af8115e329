-- Whether ingest/join_request_ids.sql can change anything: it needs gateway attempts and
-- request ids both in the workspace (an engine trace alone, or a gateway log alone, has
-- nothing to join; the join scans every arrived event, about 0.04 CPU s per 40k of them).
-- params:
select exists (select 1 from attempts) and exists (select 1 from request_ids) as found

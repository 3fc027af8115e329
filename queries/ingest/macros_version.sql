-- Which conversion macros a workspace holds (relplan/workspace/template.py, kept_macros): the
-- SHA-256 of the text of ingest/macros.sql, ingest/proxy_macros.sql and ingest/engine_macros.sql,
-- each followed by a NUL byte. Change it with them (tests/test_workspace_template.py names the
-- value): until then an ingest makes its macros as temp macros, as for a workspace holding none.
-- params:
create or replace temp macro rp_macros_digest() as
    '4384973afb04fa87c9105d062a7ca7702bf84b216945ca663477e3d77564052c';

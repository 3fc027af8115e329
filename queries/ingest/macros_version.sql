-- Which conversion macros a workspace holds (relplan/workspace/template.py, kept_macros): the
-- SHA-256 of the text of ingest/macros.sql, ingest/proxy_macros.sql and ingest/engine_macros.sql,
-- each followed by a NUL byte. Change it with them (tests/test_workspace_template.py names the
-- value): until then an ingest makes its macros as temp macros, as for a workspace holding none.
-- params:
create or replace temp macro rp_macros_digest() as
    'eb345493f8740106bc7bdc7e9f7b51a280c0cc42f5667458b96eebe0396e4d0a';

-- Which conversion macros the workspace file holds (relplan/workspace/template.py, kept_macros):
-- ingest/macros_version.sql's digest. Fails (no such function) on a workspace that holds none.
-- params:
select rp_macros_digest() as digest

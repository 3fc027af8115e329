-- Which conversion macros the workspace file holds (relplan/ingest/stage.py, kept_macros): the
-- SHA-256 of their files' text. Fails (no such function) on a workspace that holds none.
-- params:
select rp_macros_digest() as digest

-- The globs of the attachments as a session variable (workspace/attached_macros.sql reads
-- it), so a path is a bound value and never SQL text.
-- params: ids, globs
set variable rp_attached_globs = map($ids::integer[], $globs::varchar[])

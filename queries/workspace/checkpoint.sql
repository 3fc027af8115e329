-- Write the committed state to the file and free the blocks a rolled-back transaction used,
-- so a failed ingest does not leave the workspace grown.
-- params:
checkpoint

-- The block size of the open workspace file and how many of its blocks are in use (not on
-- DuckDB's free list): the file must be long enough to hold them (relplan.workspace,
-- _check_size). One row for a file, none in memory.
-- params:
select block_size, used_blocks
from pragma_database_size()
where database_name = current_database() and block_size > 0

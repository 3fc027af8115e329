-- The columns of a CSV file's header row (no rows are read).
-- params: path
select * from read_csv($path, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"') limit 0

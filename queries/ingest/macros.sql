-- Conversion macros shared by the ingest readers (temp macros, defined per connection).
-- rp_time: epoch seconds (a number, or a numeric string) or an RFC 3339 string WITH an offset
--   (Z, +02:00, +0200, +00) -> UTC epoch seconds; NULL when neither. Naive strings are refused.
-- rp_num: a number or numeric string -> DOUBLE; NULL otherwise.
-- rp_int: like rp_num but only whole numbers (3.0 yes, 3.5 no) -> DOUBLE holding an integer.
-- rp_bool: true/false (also t/f, 1/0, yes/no) -> BOOLEAN; NULL otherwise.
-- rp_str: a string with surrounding blanks removed; '' -> NULL (an empty id is a missing id).
-- rp_csv_rows(path): a CSV file with a header row, every column as text, `_ln` its line (the
--   header being line 1; quoted fields spanning lines would shift it).
-- rp_parquet_rows(path): a Parquet file with its own types, `_ln` the 1-based row number.
-- rp_json_lines(path): a JSON Lines file as text, one row per non-blank line: `ln` (1-based,
--   blank lines counted) and `line`, read as one VARCHAR column with a delimiter (0x1F) that
--   valid JSON never holds unescaped.
-- rp_json_object(line, shape): the line's JSON object as a struct of `shape` (a constant
--   json_transform structure); NULL when the line is not a JSON object.
-- rp_json_line_error(line, j): why a line is not one JSON object (j: its rp_json_object), NULL
--   when it is.
-- params:
create or replace temp macro rp_num(x) as try_cast(x as double);
create or replace temp macro rp_time(x) as coalesce(
    try_cast(x as double),
    case
        when regexp_matches(trim(x::varchar), '^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?\s*([zZ]|[+-]\d\d(:?\d\d)?)$')
        then epoch(try_cast(trim(x::varchar) as timestamptz))
    end
);
create or replace temp macro rp_int(x) as
    case when try_cast(x as double) = floor(try_cast(x as double)) then try_cast(x as double) end;
create or replace temp macro rp_bool(x) as try_cast(x as boolean);
create or replace temp macro rp_str(x) as nullif(trim(x::varchar), '');
-- Why a field failed to convert: NULL when it is absent or converted fine.
create or replace temp macro rp_bad_time(name, x) as
    case when x is not null and rp_time(x) is null
         then name || ': cannot read ' || left(x::varchar, 60)
              || ' as a time; expected epoch seconds or RFC 3339 with an offset (2025-11-30T00:00:00Z)'
    end;
create or replace temp macro rp_bad_int(name, x) as
    case when x is not null and rp_int(x) is null
         then name || ': ' || left(x::varchar, 60) || ' is not a whole number; expected an integer'
    end;
create or replace temp macro rp_bad_num(name, x) as
    case when x is not null and rp_num(x) is null
         then name || ': ' || left(x::varchar, 60) || ' is not a number'
    end;
create or replace temp macro rp_bad_bool(name, x) as
    case when x is not null and rp_bool(x) is null
         then name || ': ' || left(x::varchar, 60) || ' is not a boolean; expected true or false'
    end;
create or replace temp macro rp_csv_rows(path) as table
    select ordinality + 1 as _ln, * exclude (ordinality) from read_csv(
            path, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"',
            max_line_size = 16777216
        ) with ordinality;
create or replace temp macro rp_parquet_rows(path) as table
    select file_row_number + 1 as _ln, * exclude (file_row_number)
    from read_parquet(path, file_row_number = true);
create or replace temp macro rp_json_lines(path) as table
    select * from (
        select ordinality as ln, line
        from read_csv(
            path, columns = {'line': 'VARCHAR'}, header = false, delim = E'\x1f', quote = '',
            escape = '', auto_detect = false, max_line_size = 16777216
        ) with ordinality
    )
    where trim(coalesce(line, '')) <> '';
create or replace temp macro rp_json_object(line, shape) as
    case when json_valid(line) and json_type(line) = 'OBJECT' then json_transform(line, shape) end;
create or replace temp macro rp_json_line_error(line, j) as
    case
        when not json_valid(line) then 'malformed JSON; expected one JSON object per line'
        when j is null then 'expected a JSON object, got a JSON ' || lower(json_type(line))
    end;

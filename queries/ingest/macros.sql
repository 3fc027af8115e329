-- Conversion macros shared by the ingest readers (temp macros, defined per connection).
-- rp_time: epoch seconds (a number, or a numeric string) or an RFC 3339 string WITH an offset
--   (Z, +02:00, +0200, +00) -> UTC epoch seconds; NULL when neither. Naive strings are refused.
-- rp_num: a number or numeric string -> DOUBLE; NULL otherwise, and NULL for a boolean (a
--   Parquet `true` is not the number 1, as in JSON).
-- rp_int: like rp_num but only whole numbers (3.0 yes, 3.5 no) -> DOUBLE holding an integer.
-- rp_fast_num(x): a JSON value (the fast readers' numeric columns) -> DOUBLE; anything but a
--   JSON number (true, a string, an object) raises, so the driver re-reads the file with the
--   exact reader, which names the line (a boolean is never taken as 1).
-- rp_bool: true/false (also t/f, 1/0, yes/no) -> BOOLEAN; NULL otherwise.
-- rp_str: a string with surrounding blanks removed; '' -> NULL (an empty id is a missing id).
-- rp_bad_epoch(name, x): why a converted time is not plausible, NULL when it is: not finite,
--   negative, or at or after 2100-01-01 (4102444800). Epoch milliseconds, microseconds and
--   nanoseconds (a time in 2000..2100 once divided by 1e3, 1e6, 1e9) are named as such and
--   refused, not converted (docs/formats.md, Rules for every input). Times before 2000 are
--   kept: they are seconds from a run's t0 (the simulator's traces).
-- rp_bad_count(name, x, hi): why a converted count is not a whole number in 0..hi (the
--   stored column's range), NULL when it is, so the later cast cannot fail.
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
create or replace temp macro rp_num(x) as
    case when typeof(x) <> 'BOOLEAN' then try_cast(x as double) end;
create or replace temp macro rp_fast_num(x) as
    case
        when x is null or json_type(x) in ('UBIGINT', 'BIGINT', 'DOUBLE') then x::double
        else error('a value is not a JSON number')
    end;
create or replace temp macro rp_time(x) as coalesce(
    rp_num(x),
    case
        when regexp_matches(trim(x::varchar), '^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(:\d\d(\.\d+)?)?\s*([zZ]|[+-]\d\d(:?\d\d)?)$')
        then epoch(try_cast(trim(x::varchar) as timestamptz))
    end
);
create or replace temp macro rp_int(x) as
    case when rp_num(x) = floor(rp_num(x)) then rp_num(x) end;
create or replace temp macro rp_bool(x) as try_cast(x as boolean);
create or replace temp macro rp_str(x) as nullif(trim(x::varchar), '');
create or replace temp macro rp_bad_epoch(name, x) as
    case
        when x is null then null
        when isnan(x) or isinf(x) then name || ' is not finite; expected epoch seconds or RFC 3339'
        when x < 0 then name || ' ' || x || ' is negative; expected epoch seconds (or seconds'
            || ' from the run''s start)'
        when x >= 946684800e3 and x < 4102444800e3 then name || ' ' || x || ' looks like epoch'
            || ' milliseconds; expected epoch seconds (divide by 1000)'
        when x >= 946684800e6 and x < 4102444800e6 then name || ' ' || x || ' looks like epoch'
            || ' microseconds; expected epoch seconds (divide by 1000000)'
        when x >= 946684800e9 and x < 4102444800e9 then name || ' ' || x || ' looks like epoch'
            || ' nanoseconds; expected epoch seconds (divide by 1000000000)'
        when x >= 4102444800 then name || ' ' || x || ' is after 2100; expected epoch seconds'
    end;
create or replace temp macro rp_bad_count(name, x, hi) as
    case
        when x is null then null
        when isnan(x) or isinf(x) then name || ' is not finite; expected a whole number >= 0'
        when x < 0 or x <> floor(x) then name || ' ' || x || ' is not a whole number >= 0'
        when x > hi then name || ' ' || x || ' is too large; expected at most ' || hi::bigint
    end;
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

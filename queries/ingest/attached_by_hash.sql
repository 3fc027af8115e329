-- The attached file with this content hash, if any (an attachment's files are not copied,
-- so the sources table does not list their hashes).
-- params: sha256
select source_id, path from attached_files where sha256 = $sha256

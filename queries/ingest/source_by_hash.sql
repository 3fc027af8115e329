-- The source already stored with this content hash, if any.
-- params: sha256
select source_id, path from sources where sha256 = $sha256

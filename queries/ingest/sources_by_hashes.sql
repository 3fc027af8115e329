-- The stored sources whose content hash is one of these.
-- params: hashes
select source_id, path, sha256 from sources where list_contains($hashes::varchar[], sha256)

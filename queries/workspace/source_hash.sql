-- The content hash of one source (an attachment's: the fingerprint of its file list).
-- params: sid
select sha256 from sources where source_id = $sid

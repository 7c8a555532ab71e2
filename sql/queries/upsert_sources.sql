-- Move every committed source's checkpoint (rows of `batch_sources`). Counters add up
-- within a generation and restart with a new one.
INSERT INTO sources AS s BY NAME
SELECT source_id, workspace, provider, path, device, inode, size_bytes, mtime_ns, position_kind,
       committed_offset, prefix_digest, generation, adapter_version, policy_version,
       1 AS checkpoint_version, continuity, status, refusal, records, rejected, last_import_id,
       adapter_state
FROM batch_sources
ON CONFLICT (workspace, source_id) DO UPDATE SET
    path = excluded.path, device = excluded.device, inode = excluded.inode,
    size_bytes = excluded.size_bytes, mtime_ns = excluded.mtime_ns,
    committed_offset = excluded.committed_offset, prefix_digest = excluded.prefix_digest,
    generation = excluded.generation, adapter_version = excluded.adapter_version,
    policy_version = excluded.policy_version, continuity = excluded.continuity,
    status = excluded.status, refusal = excluded.refusal,
    records = CASE WHEN excluded.generation = s.generation THEN s.records ELSE 0 END + excluded.records,
    rejected = CASE WHEN excluded.generation = s.generation THEN s.rejected ELSE 0 END + excluded.rejected,
    last_import_id = excluded.last_import_id,
    adapter_state = excluded.adapter_state

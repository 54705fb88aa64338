"""Operations: metrics, the embedded Redis-compatible server and Cluster, the local cluster demo,
cancellation helpers. Leaves: importable by every layer; imports no other part of ``server``.
"""

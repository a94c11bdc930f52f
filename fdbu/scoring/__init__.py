"""Scoring: one subset's components and aggregates (`pipeline`), the VAD sensitivity sweep (`sweep`), shards
(`shard`), score's files (`unified`) and a scored tree read back and checked (`scored`)."""

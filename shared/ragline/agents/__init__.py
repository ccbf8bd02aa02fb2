"""Agents: model-driven loops over the retrieval core."""

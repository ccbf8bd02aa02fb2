"""Offline models: the ONNX embedder and cross-encoder, the extractive chat model."""

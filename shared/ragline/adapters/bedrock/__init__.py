"""Amazon Bedrock: Titan Text Embeddings V2 (``bedrock-runtime`` InvokeModel) behind the Embedder port
and the Rerank API (``bedrock-agent-runtime``) behind the Reranker port, through boto3.

Independent of the other backends (no import of :mod:`ragline.adapters.aws`): the AWS stack can run
Bedrock models with any store, and these adapters need nothing but boto3 and a region.
"""

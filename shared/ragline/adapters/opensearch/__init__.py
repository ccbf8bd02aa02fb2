"""The OpenSearch backend: the vector store on an OpenSearch domain (or the local node)."""
